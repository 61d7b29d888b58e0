import {
  DISTRIBUTION_METRICS,
  LATENCY_BINS,
  binEdges,
  binOf,
  type DistributionMetric,
  type LatencyBins,
  type LatencyDistribution,
} from '../../shared/latency-bins.js';
import { QUANTITIES } from '../../shared/metrics.js';
import type { RequestRecord } from '../../shared/request-record.js';
import type { LevelResult, RunRecord, Summary } from '../../shared/run-record.js';
import { jsonlNotes } from './jsonl.js';
import { streamRequests } from './read-lines.js';

/** Empty bins between a level's recorded min and max of a metric; null where it has none. */
function emptyBins(summary: Summary, bins: number): LatencyBins | null {
  if (summary.n === 0 || summary.min === null || summary.max === null) return null;
  const { edges, log } = binEdges(summary.min, summary.max, bins);
  return { edges, counts: new Array<number>(edges.length - 1).fill(0), n: 0, log };
}

/** The record level a request belongs to: its window holds the request's send (levels run one after another). */
function levelOf(levels: readonly LevelResult[], r: RequestRecord): number {
  const byIndex = levels[r.levelIndex];
  if (byIndex && r.sendMs >= byIndex.startMs - 1 && r.sendMs <= byIndex.endMs + 1) return r.levelIndex;
  return levels.findIndex((l) => r.sendMs >= l.startMs - 1 && r.sendMs <= l.endMs + 1);
}

/**
 * Each level's TTFT, TPOT and E2E counted into bins between the level's recorded min and max, as requests.jsonl
 * streams by (measured, successful requests): memory grows with levels x bins, never with the requests.
 */
export async function latencyDistribution(
  dir: string,
  record: RunRecord,
  secrets: readonly string[],
  bins = LATENCY_BINS,
): Promise<LatencyDistribution> {
  const levels = record.levels.map((l, level) => ({
    level,
    bins: Object.fromEntries(DISTRIBUTION_METRICS.map((m) => [m, emptyBins(QUANTITIES[m].summary(l), bins)])) as Record<
      DistributionMetric,
      LatencyBins | null
    >,
  }));
  const report = await streamRequests(dir, secrets, (r) => {
    if (r.warmup || !r.ok || r.endMs === null) return;
    const at = levelOf(record.levels, r);
    const level = levels[at];
    if (!level) return;
    for (const m of DISTRIBUTION_METRICS) {
      const b = level.bins[m];
      const v = QUANTITIES[m].perRequest?.(r) ?? null;
      if (!b || v === null) continue;
      const i = binOf(b.edges, v, b.log);
      if (i < 0) continue;
      b.counts[i] = (b.counts[i] ?? 0) + 1;
      b.n++;
    }
  });
  return { levels, notes: jsonlNotes(report) };
}
