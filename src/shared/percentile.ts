/**
 * Percentile of ascending data by linear interpolation between order statistics, exactly as
 * NumPy's default (`method='linear'`): rank (n-1)*p/100, and NumPy's two-sided lerp so results match bit for bit.
 */
export function percentile(sortedAsc: ArrayLike<number>, p: number): number {
  const n = sortedAsc.length;
  if (n === 0) throw new RangeError('percentile of an empty sample');
  if (!(p >= 0 && p <= 100)) throw new RangeError(`percentile p must be in [0, 100], got ${p}`);
  // NumPy divides by 100 first, then multiplies by (n - 1).
  const h = (n - 1) * (p / 100);
  const lo = Math.floor(h);
  const hi = Math.min(lo + 1, n - 1);
  const t = h - lo;
  const a = sortedAsc[lo]!;
  const b = sortedAsc[hi]!;
  const diff = b - a;
  // NumPy's _lerp interpolates from the nearer end, which keeps results monotone in t.
  return t >= 0.5 ? b - diff * (1 - t) : a + diff * t;
}
