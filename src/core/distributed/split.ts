import { UserError } from '../errors.js';
import type { LevelPlan } from '../load/level-plan.js';

/**
 * Splits `total` whole units in proportion to `weights` by largest remainder: the parts sum to exactly `total`, a
 * zero weight gets nothing, and ties go to the lower index (every worker computes the same split).
 */
export function apportion(total: number, weights: readonly number[]): number[] {
  const sum = weights.reduce((a, w) => a + w, 0);
  if (total <= 0 || sum <= 0) return weights.map(() => 0);
  const exact = weights.map((w) => (total * w) / sum);
  const parts = exact.map(Math.floor);
  let left = total - parts.reduce((a, p) => a + p, 0);
  const order = exact.map((e, i) => [e - Math.floor(e), i] as const).sort((a, b) => b[0] - a[0] || a[1] - b[1]);
  for (const [fraction, i] of order) {
    if (left === 0) break;
    if (fraction <= 0) continue;
    parts[i]! += 1;
    left--;
  }
  return parts;
}

/** `total` over `n` workers as evenly as whole units allow: the remainder goes one each to the lowest ranks. */
export function evenSplit(total: number, n: number): number[] {
  return Array.from({ length: n }, (_, r) => Math.floor(total / n) + (r < total % n ? 1 : 0));
}

/** One worker's part of a level: the plan it runs, the prompts it sends and where its request ids start. */
export interface WorkerShare {
  /** The level as this worker runs it: its concurrency (or rate, cap, trace entries), warm-up and requests per round. */
  plan: LevelPlan;
  /** The level's prompt positions (0 = first warm-up prompt) this worker sends, warm-up first, then round by round. */
  positions: number[];
  /** Its first request id, counted from the level's first. */
  firstIdOffset: number;
}

const sum = (values: readonly number[], upTo = values.length): number =>
  values.slice(0, upTo).reduce((a, v) => a + v, 0);

/** Contiguous blocks of `unit`-sized pieces: worker r's block of a section starting at `start`. */
function blocks(start: number, counts: readonly number[], rank: number, unit: number): number[] {
  const first = start + sum(counts, rank) * unit;
  return Array.from({ length: (counts[rank] ?? 0) * unit }, (_, i) => first + i);
}

/** Every n-th index from `rank` in [0, count): a trace's entries go to the workers in turn, by index. */
function strided(start: number, count: number, rank: number, n: number): number[] {
  const out: number[] = [];
  for (let i = rank; i < count; i += n) out.push(start + i);
  return out;
}

/** A trace level: each entry (and warm-up request) to one worker, by index, at its own arrival time. */
function traceShare(plan: LevelPlan, schedule: readonly number[], rank: number, n: number): WorkerShare {
  const warm = strided(0, plan.warmup, rank, n);
  const inRound = strided(0, plan.requestsPerRound, rank, n);
  const positions = [...warm];
  for (let k = 0; k < plan.rounds; k++)
    positions.push(...inRound.map((i) => plan.warmup + k * plan.requestsPerRound + i));
  const perWorker = (r: number): number =>
    strided(0, plan.warmup, r, n).length + plan.rounds * strided(0, plan.requestsPerRound, r, n).length;
  const share: LevelPlan = {
    ...plan,
    warmup: warm.length,
    requestsPerRound: inRound.length,
    schedule: inRound.map((i) => schedule[i] as number),
    // The worker's arrivals keep the trace's own times: offsets from the trace's first arrival, not from its own.
    scheduleOriginMs: plan.scheduleOriginMs ?? schedule[0] ?? 0,
  };
  if (plan.burst !== undefined) share.burst = inRound.length;
  if (plan.rate !== undefined) share.rate = plan.rate / n;
  if (plan.maxInFlight !== undefined) {
    share.maxInFlight = evenSplit(plan.maxInFlight, n)[rank];
    share.concurrency = share.maxInFlight ?? 0;
  }
  return {
    plan: share,
    positions,
    firstIdOffset: Array.from({ length: rank }, (_, r) => perWorker(r)).reduce((a, b) => a + b, 0),
  };
}

/**
 * Worker `rank`'s share of a level run by `n` workers. Closed loop: concurrency C split evenly (the sum is exactly C),
 * each round's requests and the warm-up in proportion, in contiguous blocks. Open loop: each runs a Poisson process of
 * rate λ/n (their superposition is Poisson at λ), the in-flight cap split evenly. Multi-turn: whole conversations.
 * Trace: entries by index, at their own times. A worker may get nothing (C < n): it still keeps the level's pace.
 */
export function shareOf(plan: LevelPlan, rank: number, n: number): WorkerShare {
  if (n === 1) {
    const count = plan.warmup + plan.rounds * plan.requestsPerRound;
    return { plan, positions: Array.from({ length: count }, (_, i) => i), firstIdOffset: 0 };
  }
  if (plan.schedule) return traceShare(plan, plan.schedule, rank, n);
  const unit = plan.turns !== undefined && plan.turns > 1 ? plan.turns : 1;
  const open = plan.rate !== undefined;
  const caps = plan.maxInFlight !== undefined ? evenSplit(plan.maxInFlight, n) : null;
  const lanes = open ? null : evenSplit(plan.concurrency, n);
  // Open loop splits arrivals evenly; closed loop gives each worker requests in proportion to its lanes.
  const weights = lanes ?? Array.from({ length: n }, () => 1);
  const warm = apportion(plan.warmup / unit, weights);
  const round = apportion(plan.requestsPerRound / unit, weights);
  const positions = blocks(0, warm, rank, unit);
  for (let k = 0; k < plan.rounds; k++)
    positions.push(...blocks(plan.warmup + k * plan.requestsPerRound, round, rank, unit));
  const share: LevelPlan = {
    ...plan,
    concurrency: lanes ? (lanes[rank] as number) : (caps?.[rank] ?? 0),
    warmup: (warm[rank] as number) * unit,
    requestsPerRound: (round[rank] as number) * unit,
  };
  if (open) share.rate = (plan.rate as number) / n;
  if (caps) share.maxInFlight = caps[rank];
  const totals = weights.map((_, r) => ((warm[r] as number) + plan.rounds * (round[r] as number)) * unit);
  return { plan: share, positions, firstIdOffset: sum(totals, rank) };
}

/** Refuses a sweep that cannot be split over `n` workers (an in-flight cap smaller than n leaves a worker no slot). */
export function checkSplit(plans: readonly LevelPlan[], n: number): void {
  for (const p of plans) {
    if (p.maxInFlight !== undefined && p.maxInFlight < n) {
      throw new UserError(
        `--max-concurrency ${p.maxInFlight} over ${n} workers leaves a worker no request slot while it has arrivals to send: raise --max-concurrency to at least ${n}, or use fewer workers`,
      );
    }
  }
}
