import type { Ci, Summary } from '../../shared/run-record.js';
import { emptySummary, quantileCiRanks, summarizeSorted, type SortedPasses } from './percentiles.js';

/** Values one column stores in a block of its exact list (grown a block at a time, never copied as it grows). */
const BLOCK = 65_536;

/** Largest relative error of a percentile read from the sketch (its buckets are this wide, relative to their value). */
export const SKETCH_RELATIVE_ERROR = 0.005;

/** Values a column keeps exactly before it folds them into its sketch: 1,000,000 (8 MB of doubles). */
export const EXACT_VALUES_MAX = 1_000_000;

// Bucket i holds (γ^(i-1), γ^i]: its midpoint 2γ^i/(γ+1) is within SKETCH_RELATIVE_ERROR of every value in it.
const GAMMA = (1 + SKETCH_RELATIVE_ERROR) / (1 - SKETCH_RELATIVE_ERROR);
const LOG_GAMMA = Math.log(GAMMA);
// Smaller values (a gap of 0 between events read together) count as 0: below any time or count we quote.
const SKETCH_FLOOR = 1e-9;

/**
 * A log-bucketed quantile sketch (DDSketch's scheme): every percentile it gives is within SKETCH_RELATIVE_ERROR of a
 * value at that rank; count, min, max and mean are exact, the std is Welford's.
 */
class QuantileSketch {
  private readonly buckets = new Map<number, number>();
  private zeros = 0;
  n = 0;
  min = Infinity;
  max = -Infinity;
  private meanAcc = 0;
  private m2 = 0;

  add(v: number): void {
    this.n++;
    if (v < this.min) this.min = v;
    if (v > this.max) this.max = v;
    const d = v - this.meanAcc;
    this.meanAcc += d / this.n;
    this.m2 += d * (v - this.meanAcc);
    if (v <= SKETCH_FLOOR) this.zeros++;
    else {
      const i = Math.ceil(Math.log(v) / LOG_GAMMA);
      this.buckets.set(i, (this.buckets.get(i) ?? 0) + 1);
    }
  }

  /** The values at these ascending 0-based ranks, each clamped into [min, max]. */
  private atRanks(ranks: readonly number[]): number[] {
    const out: number[] = [];
    let seen = this.zeros;
    let r = 0;
    while (r < ranks.length && ranks[r]! < seen) out[r++] = Math.max(this.min, 0);
    for (const i of [...this.buckets.keys()].sort((a, b) => a - b)) {
      seen += this.buckets.get(i)!;
      const value = Math.min(this.max, Math.max(this.min, (2 * Math.pow(GAMMA, i)) / (GAMMA + 1)));
      while (r < ranks.length && ranks[r]! < seen) out[r++] = value;
    }
    while (r < ranks.length) out[r++] = this.max;
    return out;
  }

  summary(): Summary {
    const n = this.n;
    const ps = [50, 90, 95, 99];
    // NumPy's linear rank (n-1)p/100, read at both neighbouring order statistics and interpolated.
    const hs = ps.map((p) => (n - 1) * (p / 100));
    const ci95 = quantileCiRanks(n, 95);
    const ci99 = quantileCiRanks(n, 99);
    const wanted = [
      ...hs.flatMap((h) => [Math.floor(h), Math.min(Math.floor(h) + 1, n - 1)]),
      ...(ci95 ? [ci95[0] - 1, ci95[1] - 1] : []),
      ...(ci99 ? [ci99[0] - 1, ci99[1] - 1] : []),
    ];
    const order = wanted.map((rank, k) => [rank, k] as const).sort((a, b) => a[0] - b[0]);
    const values = this.atRanks(order.map(([rank]) => rank));
    const at: number[] = [];
    order.forEach(([, k], j) => (at[k] = values[j]!));
    const pct = (k: number): number => {
      const t = hs[k]! - Math.floor(hs[k]!);
      return at[2 * k]! + (at[2 * k + 1]! - at[2 * k]!) * t;
    };
    const ci = (offset: number, ranks: [number, number] | null): Ci => (ranks ? [at[offset]!, at[offset + 1]!] : null);
    return {
      n,
      mean: this.meanAcc,
      std: n >= 2 ? Math.sqrt(this.m2 / (n - 1)) : null,
      min: this.min,
      max: this.max,
      p50: pct(0),
      p90: pct(1),
      p95: pct(2),
      p99: pct(3),
      p95Ci: ci(8, ci95),
      p99Ci: ci(ci95 ? 10 : 8, ci99),
    };
  }
}

/** What a level summary reads of one metric's values: how many, and their summary. */
export interface Column {
  readonly n: number;
  readonly sketched: boolean;
  add(v: number): void;
  summary(): Summary;
}

/**
 * A metric of whole counts (tokens per chunk, reasoning tokens): each distinct value and how often it came, so its
 * summary is always exactly `summarize` of the values, in a few entries however many there are.
 */
export class CountColumn implements Column {
  private readonly counts = new Map<number, number>();
  private count = 0;
  readonly sketched = false;

  get n(): number {
    return this.count;
  }

  add(v: number): void {
    this.counts.set(v, (this.counts.get(v) ?? 0) + 1);
    this.count++;
  }

  summary(): Summary {
    if (this.count === 0) return emptySummary();
    const values = [...this.counts.keys()].sort((a, b) => a - b);
    const ends: number[] = [];
    let end = 0;
    for (const v of values) ends.push((end += this.counts.get(v)!));
    // The sorted sample, read by rank without being built: the value whose run of copies covers that rank.
    let last = 0;
    const at = (rank: number): number => {
      // The summary reads the ranks in order: most reads fall in the run the last one did.
      if (rank < ends[last]! && (last === 0 || rank >= ends[last - 1]!)) return values[last]!;
      let lo = 0;
      let hi = ends.length - 1;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (ends[mid]! > rank) hi = mid;
        else lo = mid + 1;
      }
      last = lo;
      return values[lo]!;
    };
    const sorted = new Proxy({ length: this.count } as ArrayLike<number>, {
      get: (target, key) => (typeof key === 'string' && /^\d+$/.test(key) ? at(Number(key)) : Reflect.get(target, key)),
    });
    // The passes walk the runs: reading every rank through the proxy would build a key string per value.
    const passes: SortedPasses = {
      sum: () => this.pass((v) => v),
      squaredDeviations: (mean) => this.pass((v) => (v - mean) * (v - mean)),
    };
    return summarizeSorted(sorted, passes);
  }

  // Adds term(v) once per copy of each value, in ascending order: the sum a sorted array's loop would give.
  private pass(term: (v: number) => number): number {
    let acc = 0;
    for (const v of [...this.counts.keys()].sort((a, b) => a - b)) {
      const t = term(v);
      for (let c = this.counts.get(v)!; c > 0; c--) acc += t;
    }
    return acc;
  }
}

/**
 * One metric's values over a level, held in blocks of doubles: its summary is exactly `summarize` of the values
 * while it holds at most `exactMax` of them; past that they are folded into a QuantileSketch (see `sketched`).
 */
export class SampleColumn implements Column {
  private blocks: Float64Array[] = [];
  private count = 0;
  private sketch: QuantileSketch | null = null;

  constructor(private readonly exactMax: number = EXACT_VALUES_MAX) {}

  /** Values added so far. */
  get n(): number {
    return this.sketch ? this.sketch.n : this.count;
  }

  /** True once the column holds a sketch instead of its values (its percentiles within SKETCH_RELATIVE_ERROR). */
  get sketched(): boolean {
    return this.sketch !== null;
  }

  add(v: number): void {
    if (this.sketch) return this.sketch.add(v);
    if (this.count === this.exactMax) {
      const sketch = new QuantileSketch();
      for (const x of this.values()) sketch.add(x);
      this.sketch = sketch;
      this.count = 0;
      this.blocks = [];
      return this.sketch.add(v);
    }
    const slot = this.count % BLOCK;
    if (slot === 0) this.blocks.push(new Float64Array(BLOCK));
    this.blocks[this.blocks.length - 1]![slot] = v;
    this.count++;
  }

  /** The values held exactly, in the order added (empty once sketched). */
  values(): Float64Array {
    const out = new Float64Array(this.count);
    this.blocks.forEach((block, b) => out.set(block.subarray(0, Math.min(BLOCK, this.count - b * BLOCK)), b * BLOCK));
    return out;
  }

  /** The column's summary: `summarize` of its values, or the sketch's once sketched. */
  summary(): Summary {
    if (this.sketch) return this.sketch.summary();
    if (this.count === 0) return emptySummary();
    return summarizeSorted(this.values().sort());
  }
}
