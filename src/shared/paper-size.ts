/** The paper a PDF export prints on. */
export type PaperSize = 'A4' | 'Letter';

/** Where Letter is the usual paper (CLDR's paperSize data); everywhere else prints A4. */
const LETTER_REGIONS = new Set(['BZ', 'CA', 'CL', 'CO', 'CR', 'GT', 'MX', 'NI', 'PA', 'PH', 'PR', 'SV', 'US', 'VE']);

/**
 * The paper for a region ("US") or a locale ("en-US", "fr_CA", "en-us"): Letter where it is the usual paper, else
 * A4, also for a locale that names no region.
 */
export function paperForRegion(regionOrLocale: string | null | undefined): PaperSize {
  const parts = (regionOrLocale ?? '').split(/[-_.@]/);
  const region = parts.length === 1 ? parts[0] : parts.slice(1).find((p) => /^[A-Za-z]{2}$/.test(p));
  return region && LETTER_REGIONS.has(region.toUpperCase()) ? 'Letter' : 'A4';
}
