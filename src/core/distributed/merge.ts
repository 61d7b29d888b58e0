import type { WorkerLevelReport } from '../../shared/distributed.js';
import type { RequestRecord } from '../../shared/request-record.js';
import type { LevelRunOutput } from '../load/level-runner.js';
import { offsetAt } from './clock-sync.js';

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
 * A record moved onto rank 0's timeline: every time shifted by the one offset at its send (so its latencies stay
 * exactly as its worker measured them), tagged with its worker.
 */
export function shiftRecord(r: RequestRecord, offsetMs: number, worker: number): RequestRecord {
  const shift = (t: number): number => t + offsetMs;
  const out: RequestRecord = {
    ...r,
    worker,
    sendMs: shift(r.sendMs),
    firstTokenMs: r.firstTokenMs === null ? null : shift(r.firstTokenMs),
    endMs: r.endMs === null ? null : shift(r.endMs),
    chunks: r.chunks.map(([t, n]) => [shift(t), n]),
  };
  if (r.scheduledMs !== undefined) out.scheduledMs = shift(r.scheduledMs);
  if (r.firstContentMs !== undefined && r.firstContentMs !== null) out.firstContentMs = shift(r.firstContentMs);
  return out;
}

/** The offset a worker's record at `sendMs` gets: between the level's before and after estimates; 0 for rank 0. */
export function recordOffset(part: WorkerPart, sendMs: number): number {
  const o = part.report ?? part.offsets;
  return offsetAt(sendMs, o?.offsetBefore ?? null, o?.offsetAfter ?? null) ?? 0;
}

/** Every worker's records of a level on rank 0's timeline, in id order (ids are unique across workers). */
export function mergeRecords(parts: readonly WorkerPart[]): RequestRecord[] {
  const out: RequestRecord[] = [];
  for (const part of parts) for (const r of part.records) out.push(shiftRecord(r, recordOffset(part, r.sendMs), part.rank));
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
