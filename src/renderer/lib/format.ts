/** Number formatting for tables and axes: short, fixed units, `–` for a missing value. */

export const DASH = '–';

/** Milliseconds: 1 decimal below 100 ms, whole ms below 10 s, then seconds. */
export function fmtMs(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return DASH;
  if (Math.abs(ms) < 100) return ms.toFixed(1);
  if (Math.abs(ms) < 10_000) return ms.toFixed(0);
  return `${(ms / 1000).toFixed(1)} s`;
}

/** A rate such as tok/s: whole numbers from 100 up, one decimal below. */
export function fmtRate(v: number | null | undefined): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return DASH;
  return Math.abs(v) >= 100 ? Math.round(v).toLocaleString('en-US') : v.toFixed(1);
}

/** Dollars with cents, or three decimals below $1 (cost per million tokens is often cents). */
export function fmtUsd(v: number | null | undefined): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return DASH;
  return v < 1 ? `$${v.toFixed(3)}` : `$${v.toFixed(2)}`;
}

/** A fraction 0..1 as a percentage. */
export function fmtPct(v: number | null | undefined, digits = 0): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return DASH;
  return `${(v * 100).toFixed(digits)} %`;
}

/** A plain number with a unit, `–` when missing. */
export function fmtNum(v: number | null | undefined, unit = '', digits = 0): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return DASH;
  return `${v.toFixed(digits)}${unit ? ` ${unit}` : ''}`;
}

/** Seconds as `1m 05s` / `42s`. */
export function fmtDuration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  return `${m}m ${String(s % 60).padStart(2, '0')}s`;
}

/** An ISO date as a short local date and time. */
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
