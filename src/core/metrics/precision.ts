import { tQuantile } from './student-t.js';
import { QUANTITIES } from '../../shared/metrics.js';
import { precisionName, type PrecisionTarget } from '../../shared/precision.js';
import type { RequestRecord } from '../../shared/request-record.js';
import type { LevelPrecision, LevelResult } from '../../shared/run-record.js';
import { minSamplesForCi, percentile, quantileCi } from './percentiles.js';
import { isMeasured } from './request-metrics.js';
import { roundCv, roundResults } from './throughput.js';

/** The round spread the rounds must stay under to agree (the round-spread check's limit). */
const ROUNDS_AGREE_CV = 0.15;
/** The percentiles every level shows with an interval: a level never stops before it has enough samples for them. */
const SHOWN_PERCENTILES = [95, 99];
/** The coverage every interval keeps over all the looks of a level together. */
const PRECISION_CONFIDENCE = 0.95;

/**
 * The confidence of each look: Bonferroni over the planned looks (one after each round), so the chance that any
 * look's interval misses is at most 1 − PRECISION_CONFIDENCE, however the stop was chosen.
 */
export function lookConfidence(plannedRounds: number): number {
  return 1 - (1 - PRECISION_CONFIDENCE) / Math.max(1, plannedRounds);
}

/**
 * The interval of a percentile over the rounds: the mean of each round's percentile, ± Student's t times its standard
 * error; null with fewer than two rounds. Requests in flight together share a queue, so their latencies are not
 * independent and the order-statistic interval alone is too narrow; rounds are nearer to independent repeats.
 */
function roundsInterval(perRound: readonly number[], confidence: number): [number, number] | null {
  const r = perRound.length;
  if (r < 2) return null;
  const mean = perRound.reduce((a, b) => a + b, 0) / r;
  const sd = Math.sqrt(perRound.reduce((a, v) => a + (v - mean) ** 2, 0) / (r - 1));
  const half = tQuantile(1 - (1 - confidence) / 2, r - 1) * (sd / Math.sqrt(r));
  return [mean - half, mean + half];
}

/**
 * One figure's interval at a look: its estimate, its interval (the order-statistic one and the one over the rounds
 * together: the wider of each end) and its half-width as a share of the estimate.
 */
function figureWidth(
  values: readonly number[],
  t: PrecisionTarget,
  confidence: number,
  perRound: ReadonlyArray<readonly number[]> = [],
): LevelPrecision['figures'][number] {
  const sorted = [...values].sort((a, b) => a - b);
  const need = minSamplesForCi(t.percentile, confidence) ?? Infinity;
  const order = sorted.length >= need ? quantileCi(sorted, t.percentile, confidence) : null;
  const roundValues = perRound
    .filter((v) => v.length > 0)
    .map((v) =>
      percentile(
        [...v].sort((a, b) => a - b),
        t.percentile,
      ),
    );
  const overRounds = roundsInterval(roundValues, confidence);
  const ci: [number, number] | null =
    order && overRounds ? [Math.min(order[0], overRounds[0]), Math.max(order[1], overRounds[1])] : null;
  const value = sorted.length > 0 ? percentile(sorted, t.percentile) : null;
  const halfWidth = ci && value !== null && value > 0 ? (ci[1] - ci[0]) / 2 / value : null;
  return {
    figure: precisionName(t),
    target: t.fraction,
    value,
    ci,
    halfWidth,
    reached: halfWidth !== null && halfWidth <= t.fraction,
  };
}

/**
 * The fewest ok requests a level stops with: enough for an interval of every percentile shown at the looks'
 * confidence (p99 at 95 %: 299; at 99 %, five planned looks: 459).
 */
export function precisionFloor(confidence: number = PRECISION_CONFIDENCE): number {
  return Math.max(...SHOWN_PERCENTILES.map((p) => minSamplesForCi(p, confidence) ?? 0));
}

/**
 * A level's precision after `rounds` complete rounds of `plannedRounds`: each figure's interval at the look's
 * confidence, and whether every one is within its share and the rounds agree (at least two, spread under
 * ROUNDS_AGREE_CV). The level may stop when `reached`.
 */
export function precisionAt(
  records: readonly RequestRecord[],
  targets: readonly PrecisionTarget[],
  rounds: number,
  plannedRounds: number,
): LevelPrecision {
  const ok = records.filter((r) => isMeasured(r) && r.ok);
  const confidence = lookConfidence(plannedRounds);
  const byRound = [...new Set(ok.map((r) => r.round))].map((round) => ok.filter((r) => r.round === round));
  const figures = targets.map((t) => {
    const per = QUANTITIES[t.quantity].perRequest!;
    const values = (rs: readonly RequestRecord[]) => rs.map(per).filter((v): v is number => v !== null);
    return figureWidth(values(ok), t, confidence, byRound.map(values));
  });
  const cv = rounds >= 2 ? roundCv(roundResults(records, rounds).filter((r) => r.partial !== true)) : null;
  const agree = cv !== null && cv <= ROUNDS_AGREE_CV;
  const floor = precisionFloor(confidence);
  return {
    rounds,
    plannedRounds,
    confidence,
    figures,
    roundCv: cv,
    reached: agree && ok.length >= floor && figures.every((f) => f.reached),
  };
}

/**
 * With --precision, a level's p95 and p99 intervals (TTFT, TPOT, E2E) are recomputed at the looks' confidence: an
 * interval at a plain 95 % after a stop chosen by looking would cover less than it says. In place.
 */
export function spendIntervals(level: LevelResult, records: readonly RequestRecord[], confidence: number): void {
  const ok = records.filter((r) => isMeasured(r) && r.ok);
  const byRound = [...new Set(ok.map((r) => r.round))].map((round) => ok.filter((r) => r.round === round));
  for (const id of ['ttft', 'tpot', 'e2e'] as const) {
    const q = QUANTITIES[id];
    const values = (rs: readonly RequestRecord[]) => rs.map(q.perRequest).filter((v): v is number => v !== null);
    const at = (p: number) =>
      figureWidth(values(ok), { quantity: id, percentile: p, fraction: 1 }, confidence, byRound.map(values)).ci;
    const summary = q.summary(level);
    summary.p95Ci = at(95);
    summary.p99Ci = at(99);
  }
}
