import type { Ci, Summary } from '../../shared/run-record.js';
import { binomialDist } from './binomial.js';

/** Default confidence for percentile intervals (95 %, as docs/architecture.md states). */
export const DEFAULT_CONFIDENCE = 0.95;

// Float noise allowance when comparing a coverage with the requested confidence.
const EPS = 1e-12;

// The one percentile rule lives in shared, so that the app's figures of a chosen window are reckoned alike.
import { percentile } from '../../shared/percentile.js';

export { percentile };

/** Smallest sample size for which a distribution-free CI of the p-th percentile exists at this confidence. */
export function minSamplesForCi(p: number, confidence: number = DEFAULT_CONFIDENCE): number | null {
  if (!(p > 0 && p < 100)) return null;
  const q = p / 100;
  // The widest interval [X_(1), X_(n)] covers with 1 - q^n - (1-q)^n, increasing in n.
  for (let n = 1; n <= 1e7; n++) {
    if (widestCoverage(n, q) >= confidence - EPS) return n;
  }
  return null;
}

// Smallest k in [lo, hi] where a monotone (false..true) predicate holds; hi + 1 when it never does.
function firstTrue(lo: number, hi: number, pred: (k: number) => boolean): number {
  let a = lo;
  let b = hi + 1;
  while (a < b) {
    const mid = Math.floor((a + b) / 2);
    if (pred(mid)) b = mid;
    else a = mid + 1;
  }
  return a;
}

function widestCoverage(n: number, q: number): number {
  return 1 - Math.pow(q, n) - Math.pow(1 - q, n);
}

/**
 * 1-based order-statistic ranks [r, s] with P(X_(r) <= q_p <= X_(s)) >= confidence, equal-tailed
 * (each tail <= (1-confidence)/2) where n allows, else as close to that as the sample's ends permit; null when
 * even [X_(1), X_(n)] does not reach the confidence.
 */
export function quantileCiRanks(
  n: number,
  p: number,
  confidence: number = DEFAULT_CONFIDENCE,
): [number, number] | null {
  if (n <= 0 || !(p > 0 && p < 100)) return null;
  const q = p / 100;
  if (widestCoverage(n, q) < confidence - EPS) return null;
  // B = number of samples below the true quantile ~ Binomial(n, q);
  // X_(r) <= q_p < X_(s)  <=>  r <= B <= s-1, so coverage = F(s-1) - F(r-1).
  const dist = binomialDist(n, q);
  const F = (k: number): number => dist.cdf(k);
  const half = (1 - confidence) / 2;
  // Equal tails: r = largest rank with F(r-1) <= half, s = smallest rank with 1 - F(s-1) <= half.
  let r = firstTrue(0, n, (k) => F(k) > half + EPS);
  let s = firstTrue(0, n, (k) => 1 - F(k) <= half + EPS) + 1;
  if (r < 1) {
    // The lower end is already the sample minimum: spend the spare coverage on a shorter upper end.
    r = 1;
    s = Math.min(
      n,
      firstTrue(1, n, (k) => F(k - 1) - F(0) >= confidence - EPS),
    );
  } else if (s > n) {
    // The upper end is the sample maximum: move the lower end up as far as coverage allows.
    s = n;
    r = Math.max(1, firstTrue(1, n, (k) => F(n - 1) - F(k - 1) < confidence - EPS) - 1);
  }
  return [r, s];
}

/**
 * Distribution-free confidence interval for the p-th percentile from order statistics (binomial), or null
 * when this many samples cannot form one (p99 needs 299 at 95 %).
 */
export function quantileCi(
  sortedAsc: ArrayLike<number>,
  p: number,
  confidence: number = DEFAULT_CONFIDENCE,
): [number, number] | null {
  const ranks = quantileCiRanks(sortedAsc.length, p, confidence);
  if (!ranks) return null;
  return [sortedAsc[ranks[0] - 1]!, sortedAsc[ranks[1] - 1]!];
}

/** An all-null summary for an empty sample. */
export function emptySummary(): Summary {
  return {
    n: 0,
    mean: null,
    std: null,
    min: null,
    max: null,
    p50: null,
    p90: null,
    p95: null,
    p99: null,
    p95Ci: null,
    p99Ci: null,
    p999: null,
    p999Ci: null,
  };
}

/** n, mean, sample std (ddof=1), min, max, p50/p90/p95/p99/p99.9 and the p95/p99/p99.9 CIs of unsorted values. */
export function summarize(values: readonly number[]): Summary {
  if (values.length === 0) return emptySummary();
  // Float64Array sorts numerically (Array#sort would compare strings).
  return summarizeSorted(Float64Array.from(values).sort());
}

/**
 * The two passes of a summary over a sorted sample, each adding in rank order (so any reader of the sample gives the
 * same bits): its sum, then its squared deviations from the mean (no cancellation as in E[x^2] - E[x]^2).
 */
export interface SortedPasses {
  sum(): number;
  squaredDeviations(mean: number): number;
}

function arrayPasses(sorted: ArrayLike<number>): SortedPasses {
  return {
    sum: () => {
      let sum = 0;
      for (let i = 0; i < sorted.length; i++) sum += sorted[i]!;
      return sum;
    },
    squaredDeviations: (mean) => {
      let ss = 0;
      for (let i = 0; i < sorted.length; i++) ss += (sorted[i]! - mean) * (sorted[i]! - mean);
      return ss;
    },
  };
}

/** `summarize` of values already sorted ascending (a column's typed array, sorted in place). */
export function summarizeSorted(sorted: ArrayLike<number>, passes: SortedPasses = arrayPasses(sorted)): Summary {
  const n = sorted.length;
  if (n === 0) return emptySummary();
  const mean = passes.sum() / n;
  const ss = passes.squaredDeviations(mean);
  const p95Ci: Ci = quantileCi(sorted, 95);
  const p99Ci: Ci = quantileCi(sorted, 99);
  return {
    n,
    mean,
    std: n >= 2 ? Math.sqrt(ss / (n - 1)) : null,
    min: sorted[0]!,
    max: sorted[n - 1]!,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p95: percentile(sorted, 95),
    p99: percentile(sorted, 99),
    p95Ci,
    p99Ci,
    p999: percentile(sorted, 99.9),
    p999Ci: quantileCi(sorted, 99.9),
  };
}
