import type { BenchConfig } from '../../shared/config.js';
import type { LevelResult } from '../../shared/run-record.js';
import {
  levelSeconds,
  recordedPaces,
  type Pace,
  type PlanBasis,
  type PlannedLevel,
  type RunPlan,
} from '../../shared/run-estimate.js';
import { plannedLevel, type LevelPlan } from './level-plan.js';

/** What a run's estimate is made of: its levels' plans, the config they came from, and the paces known. */
export interface RunPlanInput {
  config: BenchConfig;
  /** One server configuration's levels (a sweep repeats them per configuration). */
  plans: readonly LevelPlan[];
  /** A prompt file's own output lengths: the flag's is not what its requests ask. */
  outputFromFile?: boolean;
  /** Paces measured before (a recorded run's, for a re-run); none for a fresh run. */
  paces?: readonly Pace[];
  /** A capacity search: its levels are chosen as it goes, this many at most per server configuration. */
  capacityLevels?: number;
}

/** The pace each level of a recorded run kept (warm-up and rounds over its span), for its re-run's estimate. */
export function paceOfRecord(levels: readonly LevelResult[]): Pace[] {
  return recordedPaces(
    levels.map((l) => ({
      concurrency: l.concurrency,
      rate: l.rate,
      outputLen: l.outputLen,
      requests: l.warmupRequests + l.rounds.reduce((n, r) => n + r.completed + r.failed, 0),
      startMs: l.startMs,
      endMs: l.endMs,
    })),
  );
}

/** Which paces a level's figure rests on: its arrival rate, a recorded pace, or none. */
function levelBasis(level: PlannedLevel, paces: readonly Pace[]): Exclude<PlanBasis, 'mixed'> {
  if (level.rate !== undefined && level.rate > 0)
    return paces.some((p) => p.rate === level.rate) ? 'recorded' : 'arrivals';
  return levelSeconds(level, paces) === null ? 'none' : 'recorded';
}

/** How long a run will take and what it sends, from its plan alone (pure: no server, no clock). */
export function planRun(input: RunPlanInput): RunPlan {
  const { config, paces = [] } = input;
  const serverConfigs = Math.max(1, config.serverVariants?.length ?? 0);
  const one = input.plans.map((p) => plannedLevel(p, input.outputFromFile ?? false));
  const levels = Array.from({ length: serverConfigs }, () => one).flat();
  const capacity = input.capacityLevels !== undefined;
  const excludes: RunPlan['excludes'] = ['launch', 'calibration'];
  if (config.coolDownToC !== undefined) excludes.push('cool-down');
  const base = {
    levels: capacity ? serverConfigs * (input.capacityLevels ?? 0) : levels.length,
    serverConfigs,
    rounds: config.rounds,
    atMost: config.precision !== undefined,
    capacity,
    excludes,
  };
  if (capacity) return { ...base, requests: 0, warmupRequests: 0, seconds: null, basis: 'none' };
  const warmupRequests = serverConfigs * input.plans.reduce((n, p) => n + p.warmup, 0);
  const requests = levels.reduce((n, l) => n + l.requests, 0);
  const bases = new Set(levels.map((l) => levelBasis(l, paces)));
  let seconds: number | null = 0;
  for (const level of levels) {
    const s = levelSeconds(level, paces);
    seconds = s === null || seconds === null ? null : seconds + s;
  }
  const basis: PlanBasis = bases.has('none') ? 'none' : bases.size > 1 ? 'mixed' : ([...bases][0] ?? 'none');
  return { ...base, requests, warmupRequests, seconds, basis };
}
