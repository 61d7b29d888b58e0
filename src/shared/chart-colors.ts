/** The charts' colours, one home for the app and the HTML report (both draw on a canvas, which reads no CSS). */
export const COLORS = {
  blue: '#2563eb',
  sky: '#0ea5e9',
  orange: '#ea580c',
  amber: '#d97706',
  red: '#dc2626',
  green: '#16a34a',
  violet: '#7c3aed',
  gray: '#6b7280',
  teal: '#0d9488',
  pink: '#db2777',
} as const;

/** One colour per GPU, in GPU order (cycled past eight). */
export const GPU_COLORS = ['#2563eb', '#ea580c', '#16a34a', '#7c3aed', '#db2777', '#0891b2', '#65a30d', '#9333ea'];

/** The shading of the timeline's spans: each level's measured window (alternating) and each slowdown kind. */
export const BAND_FILLS = {
  window: ['rgba(37, 99, 235, 0.07)', 'rgba(37, 99, 235, 0.12)'],
  thermal: 'rgba(220, 38, 38, 0.18)',
  'hw-slowdown': 'rgba(217, 119, 6, 0.22)',
  'power-cap': 'rgba(107, 114, 128, 0.16)',
} as const;
