import type { WorkerLevelReport } from '../../shared/distributed.js';
import type { HttpPhases, RequestRecord } from '../../shared/request-record.js';
import type { LevelRunOutput } from '../load/level-runner.js';
import { LevelAccumulator } from '../metrics/level-accumulator.js';
import { isMeasured } from '../metrics/request-metrics.js';
import { offsetAt } from './clock-sync.js';

/** Records written to requests.jsonl at a time: a level of 200,000 is not one string in memory. */
const APPEND_BATCH = 5000;

/** One worker's part of a level: its report (null for a worker lost before it could send one) and raw records. */
export interface WorkerPart {
  rank: number;
  report: WorkerLevelReport | null;
  /** Its records on its own clock, as measured (empty where they stream from its shard file instead). */
  records: RequestRecord[];
  /** Offsets known without a report (sent before the level began). */
  offsets?: Pick<WorkerLevelReport, 'offsetBefore' | 'offsetAfter'>;
}

/** What the per-worker view needs of a worker's records, counted as they go by (the records need not be kept). */
export interface PartTally {
  measured: number;
  /** Send minus scheduled instant of its measured open-loop requests (ms). */
  scheduleLags: number[];
}

/** The next record of one worker's part of a level (on its own clock), or null at its end. */
export type RecordSource = () => Promise<RequestRecord | null>;

function shiftPhases(h: HttpPhases, offsetMs: number): void {
  if (h.connectStartMs !== undefined) h.connectStartMs += offsetMs;
  if (h.connectEndMs !== undefined) h.connectEndMs += offsetMs;
  if (h.requestSentMs !== null) h.requestSentMs += offsetMs;
  if (h.headersMs !== null) h.headersMs += offsetMs;
  if (h.firstByteMs !== null) h.firstByteMs += offsetMs;
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
  if (r.http) shiftPhases(r.http, offsetMs);
  return r;
}

/** The offset a worker's record at `sendMs` gets: between the level's before and after estimates; 0 for rank 0. */
function recordOffset(part: Pick<WorkerPart, 'report' | 'offsets'>, sendMs: number): number {
  const o = part.report ?? part.offsets;
  return offsetAt(sendMs, o?.offsetBefore ?? null, o?.offsetAfter ?? null) ?? 0;
}

/** A worker's in-memory records as a source, in id order (sorted in place: no copy). */
function arraySource(records: RequestRecord[]): RecordSource {
  records.sort((a, b) => a.id - b.id);
  let i = 0;
  return () => Promise.resolve(records[i++] ?? null);
}

/**
 * A level being merged: each record taken once, moved onto rank 0's timeline, counted for its worker's view and for
 * the level's windows, and summarised by one accumulator over every worker's records together (so percentiles pool
 * all workers' requests). It keeps what the accumulator keeps (columns, condensed records, a bounded whole sample).
 */
export class LevelMerge {
  readonly tallies = new Map<number, PartTally>();
  /** First send (or scheduled instant) and last end of every record, on rank 0's timeline. */
  startMs = Infinity;
  endMs = -Infinity;
  firstId = Infinity;
  private measureStartMs: number | null = null;
  private measureEndMs: number | null = null;

  constructor(
    private readonly parts: readonly WorkerPart[],
    readonly accumulated: LevelAccumulator = new LevelAccumulator(),
  ) {
    for (const p of parts) this.tallies.set(p.rank, { measured: 0, scheduleLags: [] });
  }

  /** Takes one record of `part` on its worker's clock; returns it on rank 0's. */
  add(part: WorkerPart, record: RequestRecord): RequestRecord {
    const r = moveRecord(record, recordOffset(part, record.sendMs), part.rank);
    this.startMs = Math.min(this.startMs, r.scheduledMs ?? r.sendMs);
    this.endMs = Math.max(this.endMs, r.endMs ?? r.sendMs);
    this.firstId = Math.min(this.firstId, r.id);
    this.accumulated.add(r);
    if (r.warmup) return r;
    this.measureStartMs = Math.min(this.measureStartMs ?? r.sendMs, r.sendMs);
    this.measureEndMs = Math.max(this.measureEndMs ?? -Infinity, r.endMs ?? r.sendMs);
    if (isMeasured(r)) {
      const tally = this.tallies.get(part.rank)!;
      tally.measured++;
      if (r.scheduledMs !== undefined) tally.scheduleLags.push(r.sendMs - r.scheduledMs);
    }
    return r;
  }

  /**
   * The level as one run of every worker's records: the rounds every worker completed, the measured window, and cut
   * short when any worker's part was (or a worker was lost).
   */
  output(rounds: number): LevelRunOutput {
    const parts = this.parts;
    return {
      warmup: this.accumulated.warmup,
      measured: this.accumulated.measured,
      accumulated: this.accumulated,
      roundsCompleted: parts.reduce((m, p) => Math.min(m, p.report ? p.report.roundsCompleted : 0), rounds),
      measureStartMs: this.measureStartMs,
      measureEndMs: this.measureEndMs,
      aborted: parts.some((p) => !p.report || p.report.aborted),
      skippedTurns: parts.reduce((s, p) => s + (p.report?.skippedTurns ?? 0), 0),
    };
  }
}

/**
 * Merges a level's parts as their records stream in: a k-way merge by id (each source is in id order, ids are unique
 * across workers), each record written through `write` in batches as it comes, so requests.jsonl is in id order and
 * no sorted copy of the level is made.
 */
export async function streamLevel(
  parts: readonly WorkerPart[],
  sources: readonly RecordSource[],
  write: (batch: RequestRecord[]) => Promise<void>,
  accumulator?: LevelAccumulator,
): Promise<LevelMerge> {
  const merge = new LevelMerge(parts, accumulator);
  const heads = await Promise.all(sources.map((s) => s()));
  let batch: RequestRecord[] = [];
  for (;;) {
    let k = -1;
    for (let i = 0; i < heads.length; i++) if (heads[i] && (k < 0 || heads[i]!.id < heads[k]!.id)) k = i;
    if (k < 0) break;
    batch.push(merge.add(parts[k]!, heads[k]!));
    if (batch.length >= APPEND_BATCH) {
      await write(batch);
      batch = [];
    }
    heads[k] = await sources[k]!();
  }
  if (batch.length > 0) await write(batch);
  return merge;
}

/** Every worker's in-memory records of a level merged onto rank 0's timeline (in place), in id order. */
export async function mergeParts(
  parts: readonly WorkerPart[],
  write: (batch: RequestRecord[]) => Promise<void> = () => Promise.resolve(),
  accumulator?: LevelAccumulator,
): Promise<LevelMerge> {
  return streamLevel(
    parts,
    parts.map((p) => arraySource(p.records)),
    write,
    accumulator,
  );
}
