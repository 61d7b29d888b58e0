import type { RequestRecord } from '../../shared/request-record.js';
import type { RoundResult } from '../../shared/run-record.js';
import { isCancelled, isMeasured } from './request-metrics.js';

/** Latest moment a request is known to have occupied the server: end, else last chunk, else send. */
export function requestEndBound(record: RequestRecord): number {
  if (record.endMs !== null) return record.endMs;
  const last = record.chunks[record.chunks.length - 1];
  return last ? last[0] : record.sendMs;
}

/**
 * Throughput of one round: window = first send .. last end over all its requests (ok and failed bound it);
 * output tok/s = sum nOut of ok requests / window; total adds nIn (expectedIn where the server gave none);
 * req/s = completed / window; failed counts server failures (a user-cancelled request bounds the window but is no
 * failure). Null when the round has no requests.
 */
export function roundResult(records: readonly RequestRecord[], round: number): RoundResult | null {
  const inRound = records.filter((r) => isMeasured(r) && r.round === round);
  if (inRound.length === 0) return null;
  let startMs = Infinity;
  let endMs = -Infinity;
  let outTokens = 0;
  let totalTokens = 0;
  let completed = 0;
  let failed = 0;
  for (const r of inRound) {
    startMs = Math.min(startMs, r.sendMs);
    endMs = Math.max(endMs, requestEndBound(r));
    if (r.ok) {
      completed++;
      outTokens += r.nOut;
      // Unknown prompt size: the requested length is the best estimate (the input-length check says so).
      totalTokens += r.nOut + (r.nIn ?? r.expectedIn);
    } else if (!isCancelled(r)) {
      failed++;
    }
  }
  const windowMs = endMs - startMs;
  // A zero-length window has no meaningful rate; report 0 rather than Infinity in run.json.
  const perSec = (count: number): number => (windowMs > 0 ? count / (windowMs / 1000) : 0);
  return {
    round,
    outputTokPerSec: perSec(outTokens),
    totalTokPerSec: perSec(totalTokens),
    reqPerSec: perSec(completed),
    windowMs,
    completed,
    failed,
    startMs,
    endMs,
  };
}

/**
 * Per-round throughput for every round present among the measured records, in round order. With completedRounds
 * given (rounds are numbered from 0), a round numbered completedRounds or later was cut short (cancel, server
 * died) and is flagged partial: true.
 */
export function roundResults(records: readonly RequestRecord[], completedRounds?: number): RoundResult[] {
  const rounds = [...new Set(records.filter(isMeasured).map((r) => r.round))].sort((a, b) => a - b);
  return rounds
    .map((round) => roundResult(records, round))
    .filter((r): r is RoundResult => r !== null)
    .map((r) => (completedRounds !== undefined && r.round >= completedRounds ? { ...r, partial: true } : r));
}

/** Ok, measured requests whose prompt size the server did not report (total tok/s used expectedIn for them). */
export function countEstimatedInput(records: readonly RequestRecord[]): number {
  return records.filter((r) => isMeasured(r) && r.ok && r.nIn === null).length;
}

/** Coefficient of variation (sample std / mean) of per-round values; null for fewer than 2 rounds or mean 0. */
export function coefficientOfVariation(values: readonly number[]): number | null {
  const n = values.length;
  if (n < 2) return null;
  const mean = values.reduce((a, b) => a + b, 0) / n;
  if (mean === 0) return null;
  const ss = values.reduce((a, v) => a + (v - mean) * (v - mean), 0);
  return Math.sqrt(ss / (n - 1)) / mean;
}

/** Round spread: CV of per-round output tok/s (docs/architecture.md); over 0.15 fails the round-spread check. */
export function roundCv(rounds: readonly RoundResult[]): number | null {
  return coefficientOfVariation(rounds.map((r) => r.outputTokPerSec));
}
