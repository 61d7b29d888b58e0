/**
 * Binomial(n, p) distribution as a truncated table around its mode.
 *
 * Why a table built by the pmf recurrence instead of lgamma: the recurrence
 * pmf(k+1)/pmf(k) = (n-k)/(k+1) * p/(1-p) needs no special functions, never
 * overflows (values are relative to the mode, which is 1), and normalising by
 * the table's own sum makes it exact to rounding. Terms below 1e-20 of the mode
 * are dropped, so the table has O(sqrt(n)) entries even for n = 1e6.
 */
export interface BinomialDist {
  readonly n: number;
  readonly p: number;
  /** P(X <= k). */
  cdf(k: number): number;
}

// Terms this small relative to the mode cannot move a tail probability compared against ~0.025.
const NEGLIGIBLE = 1e-20;

/** Builds the Binomial(n, p) CDF, stable for n up to (at least) 1e6. */
export function binomialDist(n: number, p: number): BinomialDist {
  if (!Number.isInteger(n) || n < 0) throw new RangeError(`binomial n must be a non-negative integer, got ${n}`);
  if (!(p >= 0 && p <= 1)) throw new RangeError(`binomial p must be in [0, 1], got ${p}`);
  // Degenerate cases: all mass at 0 or at n.
  if (p === 0 || p === 1 || n === 0) {
    const at = p === 1 ? n : 0;
    return { n, p, cdf: (k) => (k >= at ? 1 : 0) };
  }
  const odds = p / (1 - p);
  const mode = Math.min(n, Math.max(0, Math.floor((n + 1) * p)));
  const up: number[] = [];
  let v = 1;
  for (let k = mode; k < n; k++) {
    v *= ((n - k) / (k + 1)) * odds;
    if (v < NEGLIGIBLE) break;
    up.push(v);
  }
  const down: number[] = [];
  v = 1;
  for (let k = mode; k > 0; k--) {
    v *= k / (n - k + 1) / odds;
    if (v < NEGLIGIBLE) break;
    down.push(v);
  }
  const lo = mode - down.length;
  const size = down.length + 1 + up.length;
  const cum = new Float64Array(size);
  let total = 0;
  // Sum smallest-first on each side so rounding stays relative to the tails.
  for (let i = 0; i < size; i++) {
    const k = lo + i;
    const term = k < mode ? down[mode - k - 1]! : k === mode ? 1 : up[k - mode - 1]!;
    total += term;
    cum[i] = total;
  }
  for (let i = 0; i < size; i++) cum[i] = cum[i]! / total;
  const hi = lo + size - 1;
  return {
    n,
    p,
    cdf: (k) => {
      if (k < lo) return 0;
      if (k >= hi) return 1;
      return cum[Math.floor(k) - lo]!;
    },
  };
}
