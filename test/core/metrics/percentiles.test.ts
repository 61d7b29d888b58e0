import { describe, expect, it } from 'vitest';
import { binomialDist } from '../../../src/core/metrics/binomial.js';
import {
  minSamplesForCi,
  percentile,
  quantileCi,
  quantileCiRanks,
  summarize,
} from '../../../src/core/metrics/percentiles.js';

// Exact Binomial(n, a/b) CDF with BigInt rationals: an independent reference for the float table.
function exactCdf(n: number, a: number, b: number, k: number): number {
  if (k < 0) return 0;
  if (k >= n) return 1;
  const A = BigInt(a);
  const B = BigInt(b);
  let coef = 1n; // C(n, j)
  let num = 0n;
  for (let j = 0; j <= k; j++) {
    if (j > 0) coef = (coef * BigInt(n - j + 1)) / BigInt(j);
    num += coef * A ** BigInt(j) * (B - A) ** BigInt(n - j);
  }
  const den = B ** BigInt(n);
  // Scale to keep 15 significant digits before converting.
  return Number((num * 10n ** 15n) / den) / 1e15;
}

describe('percentile (NumPy linear)', () => {
  it('matches hand-computed NumPy values', () => {
    const x = [1, 2, 3, 4];
    // rank = (n-1) * p/100 = 3 * 0.5 = 1.5 -> 2 + 0.5 * (3 - 2) = 2.5
    expect(percentile(x, 50)).toBe(2.5);
    // 3 * 0.95 = 2.85 -> 3 + 0.85 * 1 = 3.85
    expect(percentile(x, 95)).toBeCloseTo(3.85, 12);
    // 3 * 0.9 = 2.7 -> 3.7; 3 * 0.99 = 2.97 -> 3.97
    expect(percentile(x, 90)).toBeCloseTo(3.7, 12);
    expect(percentile(x, 99)).toBeCloseTo(3.97, 12);
    expect(percentile(x, 0)).toBe(1);
    expect(percentile(x, 100)).toBe(4);
    // rank 4 * 0.25 = 1 exactly -> the 2nd order statistic
    expect(percentile([10, 20, 30, 40, 50], 25)).toBe(20);
    expect(percentile([7], 99)).toBe(7);
  });

  it('is bit-equal to numpy.percentile on values NumPy printed', () => {
    // [float(v) for v in np.percentile([0.1, 0.7, 2.3, 5.9, 11.3, 40.0], [33.3, 95, 99])] ->
    // [1.7639999999999996, 32.825, 38.565000000000005]
    // (by hand: rank 5 * 0.333 = 1.665 -> 0.7 + 0.665 * 1.6 = 1.764; 5 * 0.95 = 4.75 -> 11.3 + 0.75 * 28.7 = 32.825)
    const x = [0.1, 0.7, 2.3, 5.9, 11.3, 40.0];
    expect(percentile(x, 33.3)).toBe(1.7639999999999996);
    expect(percentile(x, 95)).toBe(32.825);
    expect(percentile(x, 99)).toBe(38.565000000000005);
    // NumPy lerps from the nearer end: np.percentile([0.2, 4.2, 5.9, 6.7, 8.9], 99) = 8.812,
    // where the naive 6.7 + 0.96 * 2.2 gives 8.812000000000001.
    expect(percentile([0.2, 4.2, 5.9, 6.7, 8.9], 99)).toBe(8.812);
  });

  it('rejects an empty sample and p outside 0..100', () => {
    expect(() => percentile([], 50)).toThrow(RangeError);
    expect(() => percentile([1], 101)).toThrow(RangeError);
  });
});

describe('binomialDist', () => {
  it('agrees with an exact rational computation', () => {
    for (const [n, a, b] of [
      [20, 1, 2],
      [59, 19, 20],
      [300, 99, 100],
    ] as const) {
      const d = binomialDist(n, a / b);
      for (const k of [0, 1, Math.floor(n / 2), n - 3, n - 2, n - 1, n]) {
        expect(d.cdf(k)).toBeCloseTo(exactCdf(n, a, b, k), 12);
      }
    }
  });

  it('stays normalised for n = 1e6', () => {
    const d = binomialDist(1_000_000, 0.99);
    expect(d.cdf(1_000_000)).toBe(1);
    expect(d.cdf(-1)).toBe(0);
    // Mean 990000, sd 99.5: the mean sits near the middle of the distribution.
    expect(d.cdf(990_000)).toBeGreaterThan(0.5);
    expect(d.cdf(990_000)).toBeLessThan(0.52);
  });
});

describe('quantileCi (order statistics)', () => {
  it('is null when n cannot reach 95 % coverage', () => {
    // Widest interval [X_(1), X_(n)] covers 1 - q^n - (1-q)^n: for p99 that needs 0.99^n <= 0.05 -> n >= 299.
    expect(
      quantileCi(
        Array.from({ length: 298 }, (_, i) => i),
        99,
      ),
    ).toBeNull();
    expect(
      quantileCi(
        Array.from({ length: 58 }, (_, i) => i),
        95,
      ),
    ).toBeNull();
    expect(quantileCi([1, 2, 3, 4, 5], 50)).toBeNull(); // 1 - 2 * 0.5^5 = 0.9375
    expect(quantileCi([], 50)).toBeNull();
    expect(minSamplesForCi(99)).toBe(299);
    expect(minSamplesForCi(95)).toBe(59);
    expect(minSamplesForCi(50)).toBe(6);
  });

  it('gives the table ranks for the median of 20 (6th and 15th, coverage 0.9586)', () => {
    expect(quantileCiRanks(20, 50)).toEqual([6, 15]);
    const x = Array.from({ length: 20 }, (_, i) => (i + 1) * 10);
    expect(quantileCi(x, 50)).toEqual([60, 150]);
    expect(exactCdf(20, 1, 2, 14) - exactCdf(20, 1, 2, 5)).toBeCloseTo(0.9586, 4);
  });

  it('pins mid-n ranks and checks them against the exact binomial', () => {
    const cases: Array<[number, number, [number, number], number, number]> = [
      // n, p, ranks, binomial p = a/b
      [100, 95, [90, 100], 19, 20],
      [299, 99, [289, 299], 99, 100],
      [400, 99, [392, 400], 99, 100],
      [200, 90, [171, 189], 9, 10],
    ];
    for (const [n, p, ranks, a, b] of cases) {
      expect(quantileCiRanks(n, p)).toEqual(ranks);
      const [r, s] = ranks;
      const coverage = exactCdf(n, a, b, s - 1) - exactCdf(n, a, b, r - 1);
      expect(coverage).toBeGreaterThanOrEqual(0.95);
    }
  });

  it('is equal-tailed where n allows: each tail <= 2.5 % and neither end can move inward', () => {
    for (const [n, a, b, p] of [
      [100, 1, 2, 50],
      [200, 9, 10, 90],
      [400, 99, 100, 99],
      [1000, 19, 20, 95],
    ] as const) {
      const [r, s] = quantileCiRanks(n, p)!;
      expect(exactCdf(n, a, b, r - 1)).toBeLessThanOrEqual(0.025);
      expect(exactCdf(n, a, b, r)).toBeGreaterThan(0.025);
      expect(1 - exactCdf(n, a, b, s - 1)).toBeLessThanOrEqual(0.025);
      expect(1 - exactCdf(n, a, b, s - 2)).toBeGreaterThan(0.025);
    }
  });

  it('handles n = 1e6 (equal tails checked with scipy.stats.binom)', () => {
    // binom.cdf(989804, 1e6, .99) = 0.02499 <= .025 < binom.cdf(989805) = 0.02558
    expect(quantileCiRanks(1_000_000, 99)).toEqual([989805, 990196]);
    expect(quantileCiRanks(1_000_000, 50)).toEqual([499020, 500981]);
  });
});

describe('summarize', () => {
  it('gives n, mean, sample std, min, max and NumPy percentiles', () => {
    const s = summarize([4, 1, 3, 2]);
    expect(s.n).toBe(4);
    expect(s.mean).toBe(2.5);
    // deviations -1.5, -0.5, 0.5, 1.5 -> squares sum 5, / (n-1) = 5/3
    expect(s.std).toBeCloseTo(Math.sqrt(5 / 3), 12);
    expect(s.min).toBe(1);
    expect(s.max).toBe(4);
    expect(s.p50).toBe(2.5);
    expect(s.p90).toBeCloseTo(3.7, 12);
    expect(s.p95).toBeCloseTo(3.85, 12);
    expect(s.p99).toBeCloseTo(3.97, 12);
    expect(s.p95Ci).toBeNull();
    expect(s.p99Ci).toBeNull();
  });

  it('sorts numerically, not as strings', () => {
    expect(summarize([10, 9, 100]).min).toBe(9);
    expect(summarize([10, 9, 100]).p50).toBe(10);
  });

  it('carries the p95 CI from 59 samples and the p99 CI from 299', () => {
    const x = Array.from({ length: 299 }, (_, i) => i + 1); // X_(k) = k
    const s = summarize(x);
    expect(s.p99Ci).toEqual([289, 299]);
    expect(s.p95Ci).toEqual(quantileCi(x, 95));
    expect(summarize(x.slice(0, 59)).p95Ci).toEqual([50, 59]);
  });

  it('has null std for one value and all nulls for none', () => {
    expect(summarize([5]).std).toBeNull();
    expect(summarize([5]).p99).toBe(5);
    expect(summarize([])).toEqual({
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
    });
  });

  it('carries p99.9 and its interval, which needs thousands of samples', () => {
    const values = Array.from({ length: 5000 }, (_, i) => i + 1);
    const s = summarize(values);
    expect(s.p999).toBeCloseTo(4995.001, 6);
    expect(s.p999Ci).not.toBeNull();
    expect(summarize(values.slice(0, 1000)).p999Ci).toBeNull();
  });
});
