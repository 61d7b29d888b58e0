import { percentile } from '../../metrics/percentiles.js';
import { createRng } from '../../rng.js';
import type { Rng } from '../../rng.js';
import { noFigures } from './types.js';
import type { CompareBlock, CompareRequest, FigureKey, LevelFigures } from './types.js';

/** Default bootstrap replicates and seed: the same inputs give the same report. */
export const BOOTSTRAP_REPLICATES = 2000;
export const BOOTSTRAP_SEED = 20261201;

function pct(values: number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = Array.from(Float64Array.from(values).sort());
  return percentile(sorted, p);
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
  return {
    throughput: withThroughput && windowMs > 0 ? tokens / (windowMs / 1000) : null,
    ttftP50: pct(ttft, 50),
    ttftP95: pct(ttft, 95),
    tpotP50: pct(tpot, 50),
    tpotP95: pct(tpot, 95),
    e2eP50: pct(e2e, 50),
    e2eP95: pct(e2e, 95),
  };
}

/** A block bootstrap replicate: draw blocks (rounds) with replacement, then requests within each drawn block. */
export function resampleBlocks(blocks: readonly CompareBlock[], rng: Rng): CompareBlock[] {
  const out: CompareBlock[] = [];
  for (let i = 0; i < blocks.length; i++) {
    const b = blocks[Math.floor(rng() * blocks.length)] as CompareBlock;
    const n = b.requests.length;
    const requests: CompareRequest[] = new Array<CompareRequest>(n);
    for (let j = 0; j < n; j++) requests[j] = b.requests[Math.floor(rng() * n)] as CompareRequest;
    out.push({ windowMs: b.windowMs, requests });
  }
  return out;
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
  for (let i = 0; i < replicates; i++) {
    const fa = figuresFromBlocks(resampleBlocks(a, rng), options.withThroughput ?? true);
    const fb = figuresFromBlocks(resampleBlocks(b, rng), options.withThroughput ?? true);
    for (const k of keys) {
      const x = fa[k];
      const y = fb[k];
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
