import type { WorkerLevelReport } from '../../shared/distributed.js';
import type { RequestRecord } from '../../shared/request-record.js';
import type { LevelRunOutput } from '../load/level-runner.js';
import { offsetAt } from './clock-sync.js';

/** Records written to requests.jsonl at a time: a level of 200,000 is not one string in memory. */
export const APPEND_BATCH = 5000;

/** One worker's part of a level: its report (null for a worker lost before it could send one) and raw records. */
export interface WorkerPart {
  rank: number;
  report: WorkerLevelReport | null;
  /** Its records on its own clock, as measured. */
  records: RequestRecord[];
  /** Offsets known without a report (sent before the level began). */
  offsets?: Pick<WorkerLevelReport, 'offsetBefore' | 'offsetAfter'>;
}

/**
 * Moves a record onto rank 0's timeline, in place (a merge holds a whole level: no second copy of it): every time
 * shifted by the one offset at its send, so its latencies stay exactly as its worker measured them; tagged with its
 * worker.
 */
export function moveRecord(r: RequestRecord, offsetMs: number, worker: number): RequestRecord {
  r.worker = worker;
  if (offsetMs === 0) return r;
  r.sendMs += offsetMs;
  if (r.firstTokenMs !== null) r.firstTokenMs += offsetMs;
  if (r.endMs !== null) r.endMs += offsetMs;
  for (const c of r.chunks) c[0] += offsetMs;
  if (r.scheduledMs !== undefined) r.scheduledMs += offsetMs;
  if (r.firstContentMs !== undefined && r.firstContentMs !== null) r.firstContentMs += offsetMs;
  return r;
}

/** The offset a worker's record at `sendMs` gets: between the level's before and after estimates; 0 for rank 0. */
export function recordOffset(part: WorkerPart, sendMs: number): number {
  const o = part.report ?? part.offsets;
  return offsetAt(sendMs, o?.offsetBefore ?? null, o?.offsetAfter ?? null) ?? 0;
}

/** Every worker's records of a level moved onto rank 0's timeline (in place), in id order (ids are unique across workers). */
export function mergeRecords(parts: readonly WorkerPart[]): RequestRecord[] {
  const out: RequestRecord[] = [];
  for (const part of parts)
    for (const r of part.records) out.push(moveRecord(r, recordOffset(part, r.sendMs), part.rank));
  return out.sort((a, b) => a.id - b.id);
}

/**
 * The level as one run of every worker's records: warm-up and measured records on rank 0's timeline, the rounds every
 * worker completed, the measured window, and cut short when any worker's part was (or a worker was lost).
 */
export function mergeLevelOutput(parts: readonly WorkerPart[], rounds: number): LevelRunOutput {
  const all = mergeRecords(parts);
  const out: LevelRunOutput = {
    warmup: all.filter((r) => r.warmup),
    measured: all.filter((r) => !r.warmup),
    roundsCompleted: parts.reduce((m, p) => Math.min(m, p.report ? p.report.roundsCompleted : 0), rounds),
    measureStartMs: null,
    measureEndMs: null,
    aborted: parts.some((p) => !p.report || p.report.aborted),
    skippedTurns: parts.reduce((s, p) => s + (p.report?.skippedTurns ?? 0), 0),
  };
  for (const r of out.measured) {
    out.measureStartMs = out.measureStartMs === null ? r.sendMs : Math.min(out.measureStartMs, r.sendMs);
    const end = r.endMs ?? r.sendMs;
    out.measureEndMs = out.measureEndMs === null ? end : Math.max(out.measureEndMs, end);
  }
  return out;
}
