import { percentile } from '../../metrics/percentiles.js';
import { createRng } from '../../rng.js';
import type { Rng } from '../../rng.js';
import { FIGURES, noFigures } from './types.js';
import type { CompareBlock, CompareQuantity, CompareRequest, FigureKey, LevelFigures } from './types.js';

/** Default bootstrap replicates and seed: the same inputs give the same report. */
export const BOOTSTRAP_REPLICATES = 2000;
export const BOOTSTRAP_SEED = 20261201;

function pct(values: number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = Array.from(Float64Array.from(values).sort());
  return percentile(sorted, p);
}

/** Every compared figure from a throughput and a percentile of each latency (the registry says which). */
function figuresOf(throughput: number | null, at: (q: CompareQuantity, p: number) => number | null): LevelFigures {
  const out: LevelFigures = {};
  for (const f of FIGURES)
    out[f.key] = f.quantity && f.percentile !== undefined ? at(f.quantity, f.percentile) : throughput;
  return out;
}

/**
 * The figures of a level from its blocks: throughput = output tokens of all blocks / the sum of their windows
 * (vLLM's and SGLang's definition, so files and run folders agree), latency percentiles pooled over the requests.
 */
export function figuresFromBlocks(blocks: readonly CompareBlock[], withThroughput = true): LevelFigures {
  if (blocks.length === 0) return noFigures();
  const ttft: number[] = [];
  const tpot: number[] = [];
  const e2e: number[] = [];
  let tokens = 0;
  let windowMs = 0;
  for (const b of blocks) {
    windowMs += b.windowMs;
    for (const r of b.requests) {
      tokens += r.outTokens;
      if (r.ttftMs !== null) ttft.push(r.ttftMs);
      if (r.tpotMs !== null) tpot.push(r.tpotMs);
      if (r.e2eMs !== null) e2e.push(r.e2eMs);
    }
  }
  const samples = { ttft, tpot, e2e };
  return figuresOf(withThroughput && windowMs > 0 ? tokens / (windowMs / 1000) : null, (q, p) => pct(samples[q], p));
}

/** One replicate's draw: for each drawn block (with replacement), the indices of its requests drawn (with replacement). */
function drawBlocks(sizes: readonly number[], rng: Rng): Array<{ block: number; picks: Uint32Array }> {
  const out: Array<{ block: number; picks: Uint32Array }> = [];
  for (let i = 0; i < sizes.length; i++) {
    const block = Math.floor(rng() * sizes.length);
    const n = sizes[block] ?? 0;
    const picks = new Uint32Array(n);
    for (let j = 0; j < n; j++) picks[j] = Math.floor(rng() * n);
    out.push({ block, picks });
  }
  return out;
}

/** A block bootstrap replicate: draw blocks (rounds) with replacement, then requests within each drawn block. */
export function resampleBlocks(blocks: readonly CompareBlock[], rng: Rng): CompareBlock[] {
  return drawBlocks(
    blocks.map((b) => b.requests.length),
    rng,
  ).map(({ block, picks }) => {
    const b = blocks[block] as CompareBlock;
    return { windowMs: b.windowMs, requests: Array.from(picks, (k) => b.requests[k] as CompareRequest) };
  });
}

/** Blocks as typed columns (NaN = no value), so a replicate is index copies and three native sorts. */
interface Columns {
  sizes: number[];
  windowMs: number[];
  ttft: Float64Array[];
  tpot: Float64Array[];
  e2e: Float64Array[];
  out: Float64Array[];
  total: number;
}

function columns(blocks: readonly CompareBlock[]): Columns {
  const col = (b: CompareBlock, f: (r: CompareRequest) => number | null): Float64Array =>
    Float64Array.from(b.requests, (r) => f(r) ?? NaN);
  return {
    sizes: blocks.map((b) => b.requests.length),
    windowMs: blocks.map((b) => b.windowMs),
    ttft: blocks.map((b) => col(b, (r) => r.ttftMs)),
    tpot: blocks.map((b) => col(b, (r) => r.tpotMs)),
    e2e: blocks.map((b) => col(b, (r) => r.e2eMs)),
    out: blocks.map((b) => col(b, (r) => r.outTokens)),
    total: blocks.reduce((a, b) => a + b.requests.length, 0),
  };
}

/** Puts the k-th smallest of buf[0..n) at k, smaller ones left of it, larger ones right (Hoare quickselect). */
function select(buf: Float64Array, n: number, k: number): void {
  let lo = 0;
  let hi = n - 1;
  while (hi > lo) {
    const mid = (lo + hi) >> 1;
    // Median of three as pivot: sorted or constant data stay linear.
    const a = buf[lo] as number;
    const b = buf[mid] as number;
    const c = buf[hi] as number;
    const pivot = a < b ? (b < c ? b : a < c ? c : a) : a < c ? a : b < c ? c : b;
    let i = lo;
    let j = hi;
    while (i <= j) {
      while ((buf[i] as number) < pivot) i++;
      while ((buf[j] as number) > pivot) j--;
      if (i <= j) {
        const t = buf[i] as number;
        buf[i] = buf[j] as number;
        buf[j] = t;
        i++;
        j--;
      }
    }
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else return;
  }
}

/**
 * The p-th percentile of buf[0..n) by NumPy's linear rule (as `percentile`), in linear time: replicates need
 * two order statistics, not a sorted copy.
 */
export function selectPercentile(buf: Float64Array, n: number, p: number): number | null {
  if (n === 0) return null;
  const h = (n - 1) * (p / 100);
  const lo = Math.floor(h);
  select(buf, n, lo);
  const a = buf[lo] as number;
  let b = a;
  if (lo + 1 < n) {
    b = Infinity;
    for (let i = lo + 1; i < n; i++) if ((buf[i] as number) < b) b = buf[i] as number;
  }
  const t = h - lo;
  return t >= 0.5 ? b - (b - a) * (1 - t) : a + (b - a) * t;
}

/** The figures of one replicate, computed on reused buffers (same definitions as figuresFromBlocks). */
function replicateFigures(c: Columns, rng: Rng, bufs: Float64Array[], withThroughput: boolean): LevelFigures {
  const [bt, bp, be] = bufs as [Float64Array, Float64Array, Float64Array];
  let nt = 0;
  let np = 0;
  let ne = 0;
  let tokens = 0;
  let windowMs = 0;
  for (const { block, picks } of drawBlocks(c.sizes, rng)) {
    windowMs += c.windowMs[block] ?? 0;
    const t = c.ttft[block] as Float64Array;
    const p = c.tpot[block] as Float64Array;
    const e = c.e2e[block] as Float64Array;
    const o = c.out[block] as Float64Array;
    for (const k of picks) {
      tokens += o[k] as number;
      const x = t[k] as number;
      if (x === x) bt[nt++] = x;
      const y = p[k] as number;
      if (y === y) bp[np++] = y;
      const z = e[k] as number;
      if (z === z) be[ne++] = z;
    }
  }
  const bufOf = { ttft: [bt, nt], tpot: [bp, np], e2e: [be, ne] } as const;
  return figuresOf(withThroughput && windowMs > 0 ? tokens / (windowMs / 1000) : null, (q, p) =>
    selectPercentile(bufOf[q][0], bufOf[q][1], p),
  );
}

/** The 95 % bootstrap interval of B − A and of B / A for one figure. */
export interface FigureInterval {
  diff: [number, number];
  ratio: [number, number] | null;
}

function quantiles(values: number[]): [number, number] | null {
  if (values.length < 20) return null;
  const sorted = Array.from(Float64Array.from(values).sort());
  return [percentile(sorted, 2.5), percentile(sorted, 97.5)];
}

/**
 * Percentile-bootstrap 95 % intervals of the difference (and ratio) of every figure between two levels, resampling
 * each level's rounds as blocks and requests within them; seeded, so the same data give the same intervals.
 */
export function bootstrapDifference(
  a: readonly CompareBlock[],
  b: readonly CompareBlock[],
  options: { replicates?: number; seed?: number; withThroughput?: boolean } = {},
): Partial<Record<FigureKey, FigureInterval>> {
  const replicates = options.replicates ?? BOOTSTRAP_REPLICATES;
  const rng = createRng(options.seed ?? BOOTSTRAP_SEED);
  const keys = Object.keys(noFigures()) as FigureKey[];
  const diffs = new Map<FigureKey, number[]>(keys.map((k) => [k, []]));
  const ratios = new Map<FigureKey, number[]>(keys.map((k) => [k, []]));
  const ca = columns(a);
  const cb = columns(b);
  // A replicate can draw the largest block every time: room for blocks × the largest block.
  const room = (c: Columns): number => c.sizes.length * Math.max(0, ...c.sizes);
  const bufA = [0, 1, 2].map(() => new Float64Array(room(ca)));
  const bufB = [0, 1, 2].map(() => new Float64Array(room(cb)));
  const withThroughput = options.withThroughput ?? true;
  for (let i = 0; i < replicates; i++) {
    const fa = replicateFigures(ca, rng, bufA, withThroughput);
    const fb = replicateFigures(cb, rng, bufB, withThroughput);
    for (const k of keys) {
      const x = fa[k] ?? null;
      const y = fb[k] ?? null;
      if (x === null || y === null) continue;
      diffs.get(k)?.push(y - x);
      if (x > 0) ratios.get(k)?.push(y / x);
    }
  }
  const out: Partial<Record<FigureKey, FigureInterval>> = {};
  for (const k of keys) {
    const d = quantiles(diffs.get(k) ?? []);
    if (!d) continue;
    out[k] = { diff: d, ratio: quantiles(ratios.get(k) ?? []) };
  }
  return out;
}
