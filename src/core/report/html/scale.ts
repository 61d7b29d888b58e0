import { fmtTick } from '../../../shared/format.js';

/** A linear or log axis mapping data to pixels, with readable ticks. */
export interface Scale {
  map: (v: number) => number;
  ticks: number[];
  format: (v: number) => string;
}

/** Round tick steps (1, 2, 5 × 10^k) covering [lo, hi]. */
function niceTicks(lo: number, hi: number, count = 5): number[] {
  if (!Number.isFinite(lo) || !Number.isFinite(hi)) return [];
  if (hi <= lo) return [lo];
  const raw = (hi - lo) / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? raw;
  const out: number[] = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(Number(v.toPrecision(12)));
  return out;
}

/** Short tick text by the shared rules: 12k, 1,200, 350, 0.25. */
function tickText(v: number): string {
  return fmtTick(v);
}

/** A scale over [lo, hi] onto pixels [p0, p1]; log base 2 when asked and the data allow it. */
export function makeScale(lo: number, hi: number, p0: number, p1: number, log = false, zero = true): Scale {
  if (log && lo > 0 && hi > lo) {
    const l0 = Math.log2(lo);
    const l1 = Math.log2(hi);
    const pad = (l1 - l0) * 0.05 || 0.5;
    const a = l0 - pad;
    const b = l1 + pad;
    const ticks: number[] = [];
    for (let e = Math.ceil(a); e <= Math.floor(b); e++) ticks.push(2 ** e);
    return { map: (v) => p0 + ((Math.log2(v) - a) / (b - a)) * (p1 - p0), ticks, format: tickText };
  }
  let a = zero ? Math.min(0, lo) : lo;
  let b = hi;
  if (!(b > a)) {
    a = a - 1;
    b = b + 1;
  }
  const ticks = niceTicks(a, b);
  const top = Math.max(b, ticks[ticks.length - 1] ?? b);
  const bottom = Math.min(a, ticks[0] ?? a);
  return { map: (v) => p0 + ((v - bottom) / (top - bottom)) * (p1 - p0), ticks, format: tickText };
}
