/**
 * Numbers for people, one set of rules for every table, chart, export and line: a missing or non-finite value is
 * one dash; three significant digits; thousands grouped; values too small for three decimals keep their significant
 * digits (never a row of zeros); a unit is added here, so a caller never appends one to a text that may have
 * switched it (milliseconds past ten seconds read in seconds).
 */

/** The one mark for a value not measured, not applicable or not finite. */
export const DASH = '—';

/** The units a figure is shown in. '%' takes a share 0..1; '$' is written before the number. */
export type Unit = 'ms' | 's' | 'tok/s' | 'req/s' | 'inputs/s' | 'tok' | '$' | '%' | 'J' | 'W' | '°C' | 'MHz' | '';

const SIGNIFICANT = 3;
const grouped = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

const missing = (v: number | null | undefined): v is null | undefined =>
  v === null || v === undefined || !Number.isFinite(v);

/**
 * A bare number: "1,234", "123", "12.3", "1.23", "0.0123", "3.2e-7"; the dash when missing. `digits` fixes the
 * decimals instead of the significant-digit rule (a cost in cents), still grouped and still never all zeros.
 */
export function fmtNumber(v: number | null | undefined, digits?: number): string {
  if (missing(v)) return DASH;
  if (v === 0) return '0';
  const a = Math.abs(v);
  const sign = v < 0 ? '-' : '';
  if (digits !== undefined && a >= 10 ** -digits) {
    const [int, frac] = a.toFixed(digits).split('.');
    return `${sign}${grouped.format(Number(int))}${frac ? `.${frac}` : ''}`;
  }
  // Past three integer digits the significant-digit rule would round away measured units: whole numbers, grouped.
  if (a >= 10 ** SIGNIFICANT) return `${sign}${grouped.format(Math.round(a))}`;
  // Far below one the decimals would run long: the exponent form says the size at a glance.
  if (a < 1e-4) return `${sign}${a.toExponential(1)}`;
  return `${sign}${String(Number(a.toPrecision(SIGNIFICANT)))}`;
}

/** A duration in ms for people, with its unit: "850 µs", "12.3 ms", "1,234 ms", "20.5 s", "32 ns". */
export function fmtDurationMs(ms: number | null | undefined): string {
  if (missing(ms)) return DASH;
  const a = Math.abs(ms);
  if (a >= 10_000) return `${fmtNumber(ms / 1000)} s`;
  if (a >= 1 || a === 0) return `${fmtNumber(ms)} ms`;
  if (a >= 1e-3) return `${fmtNumber(ms * 1000)} µs`;
  return `${fmtNumber(ms * 1e6)} ns`;
}

/** A share 0..1 as a percentage: "12.5 %", "100 %", "0.05 %". */
export function fmtShare(share: number | null | undefined, digits?: number): string {
  if (missing(share)) return DASH;
  return `${fmtNumber(share * 100, digits)} %`;
}

/** "a–b" for a range of numbers, or the single value when they are equal. */
export function fmtRange(values: readonly number[]): string {
  // reduce, not Math.min(...values): spreading a large array overflows the stack.
  const lo = values.reduce((a, b) => Math.min(a, b), Infinity);
  const hi = values.reduce((a, b) => Math.max(a, b), -Infinity);
  return lo === hi ? fmtNumber(lo) : `${fmtNumber(lo)}–${fmtNumber(hi)}`;
}

/** "k1 n1, k2 n2" of a count map, most frequent first. */
export function fmtCounts(counts: Record<string, number>): string {
  return Object.entries(counts)
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');
}

/** A figure with its unit, the one way every view writes it: "$0.123", "12.5 %", "20.5 s", "1,234 tok/s", "71 °C". */
export function fmtValue(v: number | null | undefined, unit: Unit, digits?: number): string {
  if (missing(v)) return DASH;
  switch (unit) {
    case 'ms':
      return fmtDurationMs(v);
    case 's':
      return fmtDurationMs(v * 1000);
    case '%':
      return fmtShare(v, digits);
    case '$':
      return v < 0 ? `-$${fmtNumber(-v, digits)}` : `$${fmtNumber(v, digits)}`;
    case '':
      return fmtNumber(v, digits);
    default:
      return `${fmtNumber(v, digits)} ${unit}`;
  }
}

/** Decimals an axis step needs so neighbouring ticks differ (0.25 → 2, 0.00002 → 5), at most 12. */
function stepDigits(step: number): number {
  let digits = 0;
  while (digits < 12 && Math.abs(step * 10 ** digits - Math.round(step * 10 ** digits)) > 1e-6) digits++;
  return digits;
}

/**
 * An axis tick: as many decimals as the step between ticks needs (never "0.000 0.000"), thousands grouped, and
 * from ten thousand on the short form ("12k", "1.5M") an axis has room for.
 */
export function fmtTick(v: number | null | undefined, step?: number): string {
  if (missing(v)) return '';
  const a = Math.abs(v);
  if (a >= 1e6) return `${fmtNumber(v / 1e6)}M`;
  if (a >= 1e4) return `${fmtNumber(v / 1e3)}k`;
  return step !== undefined && step > 0 ? fmtNumber(v, stepDigits(step)) : fmtNumber(v);
}

/** A ratio: "1.23×". */
export function fmtRatio(v: number | null | undefined): string {
  return missing(v) ? DASH : `${fmtNumber(v)}×`;
}

/** Elapsed time as "42s" / "1m 05s". */
export function fmtClock(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  return `${m}m ${String(s % 60).padStart(2, '0')}s`;
}

/** An ISO date as a short local date and time ("02 Dec 2026, 03:29"), or the text itself when not a date. */
export function fmtDate(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return d.toLocaleString('en-GB', {
    year: 'numeric',
    month: 'short',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
  });
}
