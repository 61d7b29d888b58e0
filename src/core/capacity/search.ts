import type { CapacityProbe, CapacityResult, SloTarget } from '../../shared/capacity.js';
import type { LevelResult } from '../../shared/run-record.js';
import { probeOf } from './judge.js';
import { findSaturation } from './knee.js';

/** A measured level and its place in the record; null when nothing was measured (cancelled, server died). */
export type MeasureLevel = (load: number) => Promise<{ level: LevelResult; levelIndex: number } | null>;

/** How a capacity search runs: where it starts, its bound, how fine it ends, and how a level is measured. */
export interface CapacitySearchOptions {
  mode: 'concurrency' | 'rate';
  targets: readonly SloTarget[];
  /** First load tried (a concurrency or a rate). */
  start: number;
  /** Largest load tried. */
  max: number;
  /** Stop bisecting when the bracket is at most this share of its lower end (concurrency: also at 1). */
  resolution?: number;
  measure: MeasureLevel;
  /** True to stop between levels (the user cancelled). */
  stopped?: () => boolean;
}

/** Default resolution: the answer is within an eighth of itself (or one request in flight). */
export const DEFAULT_CAPACITY_RESOLUTION = 0.125;

/** Rates are probed at three significant figures so levels read cleanly. */
const roundRate = (x: number): number => Number(x.toPrecision(3));

/** Most levels a search can take: doublings up to the bound, then the bisections (for progress and planning). */
export function maxCapacityProbes(start: number, max: number, resolution = DEFAULT_CAPACITY_RESOLUTION): number {
  const doublings = Math.ceil(Math.log2(Math.max(1, max / start))) + 1;
  return doublings + Math.ceil(Math.log2(1 / resolution)) + 2;
}

/**
 * Finds the highest load whose measured percentiles meet every SLO: double from `start` until a level does not meet
 * (fails or uncertain) or `max` is reached, then bisect between the last level that met and the first that did not
 * until they are one resolution step apart. Each probe is one full level measured by `measure`.
 */
export async function searchCapacity(options: CapacitySearchOptions): Promise<CapacityResult> {
  const { mode, targets, max } = options;
  const integer = mode === 'concurrency';
  const resolution = options.resolution ?? DEFAULT_CAPACITY_RESOLUTION;
  const probes: CapacityProbe[] = [];
  const levels = new Map<number, LevelResult>();
  let lo: CapacityProbe | null = null;
  let hi: CapacityProbe | null = null;
  let outcome: CapacityResult['outcome'] | null = null;
  const floor = integer ? 1 : roundRate(options.start / 16);
  const limit = maxCapacityProbes(options.start, max, resolution) + Math.ceil(Math.log2(16));

  const probe = async (load: number): Promise<CapacityProbe | null> => {
    if (options.stopped?.() || probes.length >= limit) return null;
    const got = await options.measure(load);
    if (!got) return null;
    const p = probeOf(load, got.levelIndex, got.level, targets);
    probes.push(p);
    levels.set(p.levelIndex, got.level);
    // A level cut short is no verdict: the search ends with what it has.
    return got.level.partial ? null : p;
  };

  // Doubling phase.
  for (
    let load = Math.min(options.start, max);
    ;
    load = integer ? Math.min(2 * load, max) : roundRate(Math.min(2 * load, max))
  ) {
    const p = await probe(load);
    if (!p) {
      outcome = 'stopped';
      break;
    }
    if (p.verdict !== 'meets') {
      hi = p;
      break;
    }
    lo = p;
    if (load >= max) {
      outcome = 'max-reached';
      break;
    }
  }
  // Bisection phase (below the start too when even the first level did not meet).
  while (outcome === null && hi !== null) {
    const low = lo?.load ?? 0;
    const step = hi.load - low;
    if (lo !== null && step <= (integer ? Math.max(1, resolution * low) : resolution * low)) break;
    const mid = integer ? Math.floor((low + hi.load) / 2) : roundRate((low + hi.load) / 2);
    if (mid <= low || mid >= hi.load || mid < floor) break;
    const p = await probe(mid);
    if (!p) {
      outcome = 'stopped';
      break;
    }
    if (p.verdict === 'meets') lo = p;
    else hi = p;
  }
  outcome ??= lo === null ? 'none-meets' : 'bracketed';
  const measured = [...probes].sort((a, b) => a.load - b.load);
  const at = lo ? levels.get(lo.levelIndex) : undefined;
  return {
    mode,
    targets: [...targets],
    capacity: lo?.load ?? null,
    above: hi?.load ?? null,
    outcome,
    resolution,
    maxLoad: max,
    probes,
    outputTokPerSec: at?.outputTokPerSec ?? null,
    costPerMOutputTokUsd: at?.costPerMOutputTokUsd ?? null,
    saturation: findSaturation(measured.map((p) => ({ load: p.load, level: levels.get(p.levelIndex)! }))),
  };
}
