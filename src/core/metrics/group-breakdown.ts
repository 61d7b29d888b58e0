import type { RequestRecord } from '../../shared/request-record.js';
import type { GroupResult, RoundResult } from '../../shared/run-record.js';
import { summarize } from './percentiles.js';
import { isCancelled, outputCounted, poolLatencies } from './request-metrics.js';

/**
 * The level's measured requests split by a key (the LoRA adapter, the replica): each group's counts, its own
 * TTFT, TPOT and E2E percentiles over its ok requests, and its output tok/s over the level's complete rounds (its
 * tokens in them over their summed windows), so the groups' rates add up to the level's. Null when no record has a key.
 */
export function groupBreakdown(
  measured: readonly RequestRecord[],
  rounds: readonly RoundResult[],
  keyOf: (r: RequestRecord) => string | undefined,
): GroupResult[] | null {
  const groups = new Map<string, RequestRecord[]>();
  for (const r of measured) {
    const key = keyOf(r);
    if (key === undefined) continue;
    const list = groups.get(key);
    if (list) list.push(r);
    else groups.set(key, [r]);
  }
  if (groups.size === 0) return null;
  const complete = rounds.filter((r) => r.partial !== true);
  const completeRounds = new Set(complete.map((r) => r.round));
  const windowMs = complete.reduce((s, r) => s + r.windowMs, 0);
  // In a stable order, whatever finished first: names alphabetically, replica indices numerically.
  const sorted = [...groups.entries()].sort((a, b) => a[0].localeCompare(b[0], 'en', { numeric: true }));
  return sorted.map(([key, records]) => {
    const ok = records.filter((r) => r.ok);
    const cancelled = records.filter(isCancelled).length;
    const pooled = poolLatencies(ok);
    const inRounds = ok.filter((r) => completeRounds.has(r.round));
    const counted = inRounds.every(outputCounted);
    const tokens = inRounds.reduce((s, r) => s + r.nOut, 0);
    return {
      key,
      requests: records.length,
      completed: ok.length,
      failed: records.length - ok.length - cancelled,
      ttftMs: summarize(pooled.ttftMs),
      tpotMs: summarize(pooled.tpotMs),
      e2eMs: summarize(pooled.e2eMs),
      outputTokPerSec: windowMs > 0 && counted ? tokens / (windowMs / 1000) : null,
    };
  });
}
