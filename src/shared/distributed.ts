import { z } from 'zod';

// A distributed run's facts as the run folder keeps them: each worker's account of each level (in its shard's
// run.json, and over the wire to rank 0), and the per-worker view of the merged run (run.json of rank 0).

const int = z.number().int().min(0);
const finite = z.number().finite();

/** A worker's clock offset to rank 0 at one moment: rank0 time = worker time + offsetMs, within ± uncertaintyMs. */
export const ClockOffsetSchema = z.looseObject({
  offsetMs: finite,
  uncertaintyMs: finite.min(0),
  rttMs: finite.min(0),
  atMs: finite,
  pings: int,
});
export type ClockOffset = z.infer<typeof ClockOffsetSchema>;

/** A level's load as it crosses the wire (the fields of core's LevelPlan). */
export const LevelPlanSchema = z.looseObject({
  concurrency: int,
  rate: z.number().positive().optional(),
  maxInFlight: int.optional(),
  inputLen: int,
  outputLen: int,
  rounds: int,
  requestsPerRound: int,
  warmup: int,
  turns: int.optional(),
  thinkTimeMs: z.number().min(0).optional(),
  schedule: z.array(finite).optional(),
  scheduleOriginMs: finite.optional(),
  burst: int.optional(),
});

/** A worker's account of one level: its share, its clock offsets around it, its own client figures. */
export const WorkerLevelReportSchema = z.looseObject({
  rank: int,
  host: z.string().max(256),
  levelIndex: int,
  serverConfigIndex: int,
  serverVariant: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).optional(),
  /** The whole level's plan (what rank 0 asked), and this worker's part of it. */
  plan: LevelPlanSchema,
  share: LevelPlanSchema,
  /** Records this worker sent for the level (warm-up included). */
  requests: int,
  offsetBefore: ClockOffsetSchema.nullable(),
  offsetAfter: ClockOffsetSchema.nullable(),
  loopLagP99Ms: finite.nullable(),
  roundsCompleted: int,
  aborted: z.boolean(),
  abortReason: z.string().max(2000).optional(),
  skippedTurns: int,
  /** How late this worker began its batches after the announced instant, at worst (ms). */
  startLateMs: finite.min(0),
  /** The worker's own span of the level (its clock). */
  startMs: finite,
  endMs: finite,
});
export type WorkerLevelReport = z.infer<typeof WorkerLevelReportSchema>;

/** One worker in one level of a merged run: its share of the load, its clock and its own client check. */
export interface WorkerLevelView {
  rank: number;
  host: string;
  /** Its part of the level: lanes (closed loop) or rate and cap (open loop). */
  concurrency: number;
  rate?: number;
  maxInFlight?: number;
  /** Measured requests it sent, and their share of the level's. */
  requests: number;
  share: number;
  /** Offset to rank 0's clock (ms) and its uncertainty, at the level's start; null where it was not measured. */
  offsetMs: number | null;
  uncertaintyMs: number | null;
  /** How far the offset moved over the level (ms), and as a rate (ppm); null with one estimate. */
  offsetChangeMs: number | null;
  driftPpm: number | null;
  loopLagP99Ms: number | null;
  scheduleLagP99Ms: number | null;
  /** Its own client check (its event loop and schedule lag), and that check's code (absent in older folders). */
  client: 'pass' | 'warn' | 'fail';
  clientCode?: string;
  startLateMs: number;
  /** Set when the worker was lost during the level: why. */
  lost?: string;
}

/** A distributed run: in rank 0's merged folder ('merged') or in one worker's shard folder ('shard'). */
export interface DistributedRecord {
  role: 'merged' | 'shard';
  worldSize: number;
  /** rank 0's rendezvous address. */
  coordinator: string;
  /** How ranks were found: slurm, kubernetes, torch (RANK/WORLD_SIZE) or flags. */
  launcher: string;
  /** Every worker that joined, rank 0 first. */
  workers: Array<{ rank: number; host: string; pid?: number }>;
  /** Shards only: this worker's rank, the merged run's id, and its account of each level. */
  rank?: number;
  runId?: string;
  levels?: WorkerLevelReport[];
}

export const DistributedRecordSchema = z.looseObject({
  role: z.enum(['merged', 'shard']),
  worldSize: int,
  coordinator: z.string(),
  launcher: z.string(),
  workers: z.array(z.looseObject({ rank: int, host: z.string(), pid: int.optional() })),
  rank: int.optional(),
  runId: z.string().optional(),
  levels: z.array(WorkerLevelReportSchema).optional(),
});

export const WorkerLevelViewSchema = z.looseObject({
  rank: int,
  host: z.string(),
  concurrency: z.number(),
  requests: int,
  share: z.number(),
  offsetMs: z.number().nullable(),
  uncertaintyMs: z.number().nullable(),
  client: z.enum(['pass', 'warn', 'fail']),
  clientCode: z.string().optional(),
  startLateMs: z.number(),
});
