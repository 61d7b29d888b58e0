import type { BenchConfig, Slo } from '../../shared/config.js';
import { LIMITS } from '../../shared/config.js';
import { parseSloTargets, type SloTarget } from '../../shared/capacity.js';
import { UserError } from '../errors.js';
import { planLevels, type LevelPlan } from '../load/level-plan.js';

/** Default bounds of the search: past them a level is not a realistic deployment (and LIMITS caps them anyway). */
const DEFAULT_MAX = { concurrency: 512, rate: 1000 } as const;

/** One request shape a search runs at: an input length and an output length, in tokens. */
interface CapacityShape {
  inputLen: number;
  outputLen: number;
}

/** The capacity searches from the config: mode, SLOs, start and bound, and the shapes (one search each per server). */
export interface CapacityPlan {
  mode: 'concurrency' | 'rate';
  targets: SloTarget[];
  start: number;
  max: number;
  /** Every (input length, output length) pair of the config, in sweep order. */
  shapes: CapacityShape[];
  /** The level at a load and shape (default the first), with the same warm-up, rounds and requests-per-round rules as a sweep. */
  planAt: (load: number, shape?: CapacityShape) => LevelPlan;
}

/**
 * The search's SLOs: --slo's percentile targets, else the per-request --slo-*-ms limits taken as p95 targets.
 * Throws a UserError naming the fix when there are none or the run shape cannot be searched.
 */
export function capacityPlan(config: BenchConfig): CapacityPlan {
  const parsed = config.slo?.targets ? parseSloTargets(config.slo.targets) : null;
  if (parsed && !parsed.ok) throw new UserError(`--slo ${parsed.error}`);
  const targets: SloTarget[] = parsed?.ok ? parsed.targets : [];
  if (targets.length === 0 && config.slo) {
    if (config.slo.ttftMs) targets.push({ metric: 'ttft', percentile: 95, limitMs: config.slo.ttftMs });
    if (config.slo.tpotMs) targets.push({ metric: 'tpot', percentile: 95, limitMs: config.slo.tpotMs });
    if (config.slo.e2eMs) targets.push({ metric: 'e2e', percentile: 95, limitMs: config.slo.e2eMs });
  }
  if (targets.length === 0) {
    throw new UserError(
      '--find-capacity needs SLOs to meet: add --slo ttft_p95=500,tpot_p95=50 (any of ttft, tpot, e2e, itl)',
    );
  }
  const mode = config.rate && config.rate.length > 0 ? 'rate' : 'concurrency';
  const limit = LIMITS[mode];
  const max = config.capacityMax ?? Math.min(DEFAULT_MAX[mode], limit.max);
  if (max > limit.max) {
    throw new UserError(`--capacity-max ${max} is over ${limit.max.toLocaleString('en-US')}: ${limit.why}`);
  }
  if (mode === 'concurrency' && !Number.isInteger(max)) {
    throw new UserError(`--capacity-max ${max} must be a whole number of requests in flight in the closed loop`);
  }
  const start = Math.min(mode === 'rate' ? Math.min(...config.rate!) : Math.min(...config.concurrency), max);
  // A fixed --requests-per-round grows to the concurrency probed: a round must fill every slot at least once
  // (with --turns, every slot with a whole conversation).
  const perRound = (c: number): number | undefined =>
    config.requestsPerRound === undefined
      ? undefined
      : Math.max(config.requestsPerRound, c * Math.max(1, config.turns ?? 1));
  const shapes = config.inputLen.flatMap((inputLen) => config.outputLen.map((outputLen) => ({ inputLen, outputLen })));
  const planAt = (load: number, shape: CapacityShape = shapes[0]!): LevelPlan => {
    const one = { ...config, inputLen: [shape.inputLen], outputLen: [shape.outputLen] };
    return planLevels(
      mode === 'rate' ? { ...one, rate: [load] } : { ...one, concurrency: [load], requestsPerRound: perRound(load) },
    )[0]!;
  };
  // The bound is checked now, before a run folder exists: a too-large plan fails here, not an hour in.
  for (const shape of shapes) planAt(max, shape);
  return { mode, targets, start, max, shapes, planAt };
}

/** The per-request SLOs goodput counts against: --slo-*-ms, else each metric's --slo percentile limit. */
export function goodputSlo(config: BenchConfig): Slo | undefined {
  const parsed = config.slo?.targets ? parseSloTargets(config.slo.targets) : null;
  const targets = parsed?.ok ? parsed.targets : [];
  const limit = (metric: SloTarget['metric']): number | undefined =>
    targets
      .filter((t) => t.metric === metric)
      .reduce<number | undefined>((m, t) => Math.min(m ?? t.limitMs, t.limitMs), undefined);
  const slo: Slo = {
    ttftMs: config.slo?.ttftMs ?? limit('ttft'),
    tpotMs: config.slo?.tpotMs ?? limit('tpot'),
    e2eMs: config.slo?.e2eMs ?? limit('e2e'),
  };
  const defined = Object.fromEntries(Object.entries(slo).filter(([, v]) => v !== undefined)) as Slo;
  // Only an ITL target (no per-request bound): no goodput rather than a success rate posing as one.
  return Object.keys(defined).length > 0 ? defined : undefined;
}
