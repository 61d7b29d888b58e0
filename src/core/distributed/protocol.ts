import { z } from 'zod';
import { ClockOffsetSchema, LevelPlanSchema, WorkerLevelReportSchema } from '../../shared/distributed.js';
export type { WorkerLevelReport } from '../../shared/distributed.js';
import type { LevelPlan } from '../load/level-plan.js';

/** A level plan as the wire carries it (the schema is loose: a field added to LevelPlan later still crosses). */
export type WirePlan = z.infer<typeof LevelPlanSchema>;
/** LevelPlan is an interface (no index signature): the same object, typed for the wire. */
export function wirePlan(plan: LevelPlan): WirePlan {
  return plan as unknown as WirePlan;
}

// The rendezvous protocol between rank 0 and its workers: JSON text frames over one WebSocket per worker. Every frame
// is checked against its schema on arrival (a peer on the network is untrusted); objects are loose so that a field
// added later does not break an older peer of the same protocol version.

/** Bumped when a message changes meaning; both sides refuse a peer of another version. */
export const PROTOCOL_VERSION = 1;

/**
 * Heartbeats: a peer whose process died closes its connection at once; these catch a machine or network that went
 * silent. Generous, because a busy event loop (a level of 200,000 records being summarized) answers late, not never.
 */
export const HEARTBEAT_MS = 5000;
export const HEARTBEAT_MISSES = 6;

/** Largest frame either side accepts: a batch of records is split well below it. */
export const MAX_FRAME_BYTES = 64 * 1024 * 1024;
/** Records per frame: a round of 100,000 requests goes as 50 frames. */
export const RECORDS_PER_FRAME = 2000;

const int = z.number().int().min(0);
const finite = z.number().finite();

/** A request record as it crosses the wire: the fields the merge and the metrics read are checked, the rest kept. */
const WireRecordSchema = z.looseObject({
  id: int,
  requestTag: z.string().max(200),
  levelIndex: int,
  round: z.number().int().min(-1),
  warmup: z.boolean(),
  scheduledMs: finite.optional(),
  sendMs: finite,
  firstTokenMs: finite.nullable(),
  endMs: finite.nullable(),
  ttftMs: finite.nullable().optional(),
  e2eMs: finite.nullable().optional(),
  chunks: z.array(z.tuple([finite, finite])),
  nOut: int,
  nIn: int.nullable(),
  expectedIn: int,
  expectedOut: int,
  ok: z.boolean(),
  firstContentMs: finite.nullable().optional(),
});

/** What a worker sends rank 0. */
export const ToCoordinatorSchema = z.discriminatedUnion('type', [
  z.looseObject({
    type: z.literal('hello'),
    protocol: z.number(),
    version: z.string().max(100),
    rank: int,
    worldSize: int,
    configDigest: z.string().max(200),
    host: z.string().max(256),
    pid: int,
    token: z.string().max(1000).optional(),
  }),
  z.looseObject({ type: z.literal('ping'), seq: int, t1: finite }),
  z.looseObject({ type: z.literal('arrive'), key: z.string().max(100) }),
  z.looseObject({
    type: z.literal('offset'),
    levelIndex: int,
    when: z.enum(['before', 'after']),
    offset: ClockOffsetSchema,
  }),
  z.looseObject({
    type: z.literal('records'),
    levelIndex: int,
    records: z.array(WireRecordSchema).max(RECORDS_PER_FRAME),
  }),
  z.looseObject({ type: z.literal('done'), report: WorkerLevelReportSchema }),
  z.looseObject({ type: z.literal('fail'), reason: z.string().max(4000), exitCode: int.optional() }),
  z.looseObject({ type: z.literal('bye'), reason: z.string().max(4000) }),
]);
export type ToCoordinator = z.infer<typeof ToCoordinatorSchema>;

/** What rank 0 sends a worker. */
export const ToWorkerSchema = z.discriminatedUnion('type', [
  z.looseObject({
    type: z.literal('welcome'),
    runId: z.string().max(300),
    runNonce: int,
    tagPrefix: z.string().max(100),
  }),
  z.looseObject({ type: z.literal('reject'), reason: z.string().max(4000) }),
  z.looseObject({ type: z.literal('pong'), seq: int, t1: finite, t2: finite, t3: finite }),
  z.looseObject({
    type: z.literal('server'),
    index: int,
    baseUrl: z.string().max(2000),
    model: z.string().max(1000),
    plans: z.array(LevelPlanSchema),
    variant: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).optional(),
  }),
  z.looseObject({
    type: z.literal('level'),
    levelIndex: int,
    firstId: int,
    firstPromptIndex: int,
    plan: LevelPlanSchema,
  }),
  z.looseObject({ type: z.literal('go'), key: z.string().max(100), atMs: finite }),
  z.looseObject({ type: z.literal('abort'), reason: z.string().max(4000) }),
  z.looseObject({ type: z.literal('end'), status: z.string().max(40), reason: z.string().max(4000).optional() }),
]);
export type ToWorker = z.infer<typeof ToWorkerSchema>;

/** Parses one frame; null when it is not JSON or not a message of this protocol (the peer is then told and dropped). */
export function parseFrame<T>(schema: z.ZodType<T>, data: unknown): T | null {
  let value: unknown;
  try {
    value = JSON.parse(typeof data === 'string' ? data : Buffer.isBuffer(data) ? data.toString('utf8') : String(data));
  } catch {
    return null;
  }
  const parsed = schema.safeParse(value);
  return parsed.success ? parsed.data : null;
}

/** The barrier key of a level's batch: the warm-up is batch -1, rounds count from 0, 'end' follows the last. */
export function batchKey(levelIndex: number, batch: number | 'start' | 'end'): string {
  return `L${levelIndex}:${batch}`;
}
