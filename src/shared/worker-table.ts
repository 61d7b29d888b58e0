import { levelTitle } from './report-columns.js';
import type { WorkerLevelView } from './distributed.js';
import type { LevelResult, RunRecord } from './run-record.js';

/** Header of the per-worker table of a distributed run (times in ms). */
export const WORKER_TABLE_HEAD = [
  'level',
  'worker',
  'host',
  'load',
  'requests',
  'share',
  'offset',
  '± unc',
  'drift ppm',
  'loop lag p99',
  'client',
  'note',
] as const;

/** What every view says under the table: how a distributed run's figures are made. */
export const WORKER_TABLE_NOTE =
  "Driven from several load generators: every percentile is computed over all workers' requests together (never an average of per-worker percentiles, which is no percentile of anything); offsets map each worker's clock onto rank 0's, in ms.";

const ms = (v: number | null): string => (v === null ? '—' : v.toFixed(3));

function load(v: WorkerLevelView): string {
  if (v.rate !== undefined)
    return `${Number(v.rate.toPrecision(4))}/s${v.maxInFlight !== undefined ? ` ≤${v.maxInFlight}` : ''}`;
  return `c=${v.concurrency}`;
}

/**
 * Distributed levels: one row per level and worker (its load, requests and share, its clock offset to rank 0 and
 * that offset's uncertainty, the drift over the level, its own event-loop lag and client check, and why it was lost);
 * empty for a run from one process. `name` says which level a row is.
 */
export function workerTableRows(record: RunRecord, name: (level: LevelResult) => string = levelTitle): string[][] {
  return record.levels.flatMap((l) =>
    (l.workers ?? []).map((w) => [
      name(l),
      String(w.rank),
      w.host,
      load(w),
      String(w.requests),
      `${(w.share * 100).toFixed(1)} %`,
      ms(w.offsetMs),
      ms(w.uncertaintyMs),
      w.driftPpm === null ? '—' : w.driftPpm.toFixed(1),
      w.loopLagP99Ms === null ? '—' : w.loopLagP99Ms.toFixed(1),
      w.clientCode ? `${w.client} (${w.clientCode})` : w.client,
      w.lost ? `lost: ${w.lost}` : w.startLateMs > 1 ? `started ${w.startLateMs.toFixed(1)} ms late` : '',
    ]),
  );
}
