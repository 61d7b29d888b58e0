import { upgradeServerConfig } from './server-schema.js';
import { z } from 'zod';
import { ENDPOINT_KINDS } from './endpoint-kinds.js';
import type { ZodError } from 'zod';
import type { RunRecord, RunStatus } from './run-record.js';
import { DistributedRecordSchema, WorkerLevelViewSchema } from './distributed.js';
import { LIMITS } from './config.js';

// The run record's zod schema, for reading run.json back. Objects are loose: a field added later within
// schemaVersion 1 ("add, never rename") must not make an older reader refuse the file.

// Every number is finite and within what a run can hold (1e308 is no measurement); throughputs, counts and
// latencies are never negative; shares lie in [0, 1]. A run.json that breaks these is refused in one line,
// never rendered as if measured.
/** Past this no recorded quantity (ms, tokens, joules, requests) can be: the value was not measured. */
const RECORD_NUMBER_MAX = 1e15;
const IMPOSSIBLE = 'an impossible value (beyond ±1e15)';
const num = z.number().min(-RECORD_NUMBER_MAX, IMPOSSIBLE).max(RECORD_NUMBER_MAX, IMPOSSIBLE);
const numOrNull = num.nullable();
/** A throughput, a duration or a latency: never below zero. */
const nonneg = num.min(0, 'an impossible value (below zero)');
const nonnegOrNull = nonneg.nullable();
const count = nonneg.int('an impossible value (not a whole count)');
/** Requests completed, failed or cancelled: no run holds more than the requests a run may have. */
const requests = count.max(
  LIMITS.totalRequests.max,
  `an impossible value (more requests than a run holds, ${LIMITS.totalRequests.max})`,
);
const share = nonneg.max(1, 'an impossible value (a share above 1)');
const shareOrNull = share.nullable();
const ci = z.tuple([num, num]).nullable();
const latencyCi = z.tuple([nonneg, nonneg]).nullable();
/** A timestamp as servebench writes it (ISO 8601); anything Date cannot read is no date. */
const isoDate = z.string().refine((s) => /^\d{4}-\d\d-\d\d/.test(s) && !Number.isNaN(Date.parse(s)), 'not a date');

const CheckSchema = z.looseObject({
  id: z.string(),
  status: z.enum(['pass', 'warn', 'fail']),
  detail: z.string(),
  code: z.string().optional(),
  facts: z.record(z.string(), z.union([z.number(), z.string(), z.boolean(), z.null()])).optional(),
});

const SummarySchema = z.looseObject({
  n: count,
  mean: numOrNull,
  std: nonnegOrNull,
  min: numOrNull,
  max: numOrNull,
  p50: numOrNull,
  p90: numOrNull,
  p95: numOrNull,
  p99: numOrNull,
  p95Ci: ci,
  p99Ci: ci,
  p999: numOrNull.optional(),
  p999Ci: ci.optional(),
});

/** A summary of a latency or a size (TTFT, TPOT, ITL, E2E, tokens per chunk): no figure of it is negative. */
const LatencySchema = SummarySchema.extend({
  mean: nonnegOrNull,
  min: nonnegOrNull,
  max: nonnegOrNull,
  p50: nonnegOrNull,
  p90: nonnegOrNull,
  p95: nonnegOrNull,
  p99: nonnegOrNull,
  p95Ci: latencyCi,
  p99Ci: latencyCi,
  p999: nonnegOrNull.optional(),
  p999Ci: latencyCi.optional(),
});

/** One group of a level (a LoRA adapter, a replica): counts, latencies and its output tok/s. */
const GroupSchema = z.looseObject({
  key: z.string().max(200),
  requests,
  completed: requests,
  failed: requests,
  ttftMs: LatencySchema,
  tpotMs: LatencySchema,
  e2eMs: LatencySchema,
  outputTokPerSec: nonnegOrNull,
});

const RoundSchema = z.looseObject({
  round: count,
  outputTokPerSec: nonneg,
  totalTokPerSec: nonneg,
  reqPerSec: nonneg,
  windowMs: nonneg,
  completed: requests,
  failed: requests,
  startMs: num,
  endMs: num,
  partial: z.boolean().optional(),
});

const LevelTelemetrySchema = z.looseObject({
  source: z.string(),
  reason: z.string().optional(),
  samples: num,
  smClockMeanMhz: numOrNull,
  smClockMinMhz: numOrNull,
  clockRatioMean: numOrNull,
  clockRatioMin: numOrNull,
  tempMaxC: numOrNull,
  powerMeanW: numOrNull,
  energyJ: numOrNull,
  jPerOutputTok: numOrNull,
  throttle: z.looseObject({
    thermalFraction: numOrNull,
    hwSlowdownFraction: numOrNull,
    powerCapFraction: numOrNull,
    idleFraction: numOrNull,
    unknownFraction: numOrNull,
  }),
  kvUsagePeak: numOrNull,
  waitingPeak: numOrNull,
  runningPeak: numOrNull,
  preemptions: numOrNull,
  prefixCacheHits: numOrNull,
  prefixCacheQueries: numOrNull.optional(),
  prefixCacheHitRate: numOrNull.optional(),
  engineDecodeMeanMs: numOrNull.optional(),
  engineTtftParts: z
    .looseObject({
      fromMs: num,
      toMs: num,
      requests: num,
      queueMeanMs: numOrNull,
      prefillMeanMs: numOrNull,
      ttftMeanMs: numOrNull,
    })
    .optional(),
  engineDecodeRequests: numOrNull.optional(),
  otherGpuProcesses: z.array(z.string()).optional(),
  issues: z
    .array(
      z.looseObject({
        source: z.string(),
        code: z.string(),
        field: z.string().optional(),
        count: num.optional(),
        example: z.string().optional(),
        detail: z.string(),
      }),
    )
    .optional(),
});

const TTFT_PARTS = ['queue', 'prefill', 'server-other', 'connect', 'rest'] as const;
const TtftSplitSchema = z.looseObject({
  basis: z.enum(['mean', 'p50']),
  ttftMs: num,
  requests: count,
  parts: z.array(
    z.looseObject({
      part: z.enum(TTFT_PARTS),
      ms: numOrNull,
      source: z.enum(['engine-metrics', 'engine-ttft-less-queue', 'server-timings', 'client', 'rest', 'unknown']),
    }),
  ),
  unknown: z.array(z.enum(TTFT_PARTS)),
  restShare: numOrNull,
  decode: z
    .looseObject({ msPerToken: num, source: z.enum(['engine-metrics', 'server-timings']) })
    .nullable()
    .optional(),
});

const LevelSchema = z.looseObject({
  serverConfigIndex: count,
  serverVariant: z.record(z.string(), z.union([z.string(), num, z.boolean()])).optional(),
  concurrency: count,
  rate: nonneg.optional(),
  burst: count.optional(),
  inputLen: count,
  outputLen: count,
  startMs: num,
  endMs: num,
  warmupRequests: count,
  rounds: z.array(RoundSchema),
  ttftMs: LatencySchema,
  tpotMs: LatencySchema,
  itlMs: LatencySchema,
  itlPerTokenMs: LatencySchema,
  e2eMs: LatencySchema,
  tokensPerChunk: LatencySchema,
  itlCoalescedShare: z.number().min(0).max(1).optional(),
  serverItlMs: LatencySchema.optional(),
  scheduleLagMs: SummarySchema.optional(),
  offered: z
    .looseObject({
      inFlightMean: nonneg.optional(),
      inFlightP5: nonneg.optional(),
      windowMs: nonneg.optional(),
      shortfallAfterFailures: nonneg.optional(),
      conversationsMean: nonneg.optional(),
      conversationsP5: nonneg.optional(),
      ratePerSec: nonneg.optional(),
      scheduledRatePerSec: nonneg.optional(),
      heldByCap: nonneg.optional(),
    })
    .optional(),
  byAdapter: z.array(GroupSchema).optional(),
  byReplica: z.array(GroupSchema).optional(),
  cacheReset: z
    .looseObject({ status: z.enum(['done', 'not-possible', 'failed']), detail: z.string().max(2000).optional() })
    .optional(),
  byTurn: z.array(z.looseObject({ turn: count, inputTokens: nonnegOrNull, ttftMs: LatencySchema })).optional(),
  // null when the level was cut short before a complete round (no throughput from a crash).
  outputTokPerSec: nonnegOrNull,
  totalTokPerSec: nonnegOrNull,
  reqPerSec: nonnegOrNull,
  roundCv: nonnegOrNull,
  costPerMOutputTokUsd: nonneg.optional(),
  costPerMOutputTokAtUtilizationUsd: nonneg.optional(),
  endpoint: z.enum(ENDPOINT_KINDS).optional(),
  batchSize: count.optional(),
  inputsPerSec: nonnegOrNull.optional(),
  structuredValidRate: share.optional(),
  structuredAnswers: count.optional(),
  inputTokPerSec: nonnegOrNull.optional(),
  costPerMInputTokUsd: nonneg.optional(),
  costPerMInputTokAtUtilizationUsd: nonneg.optional(),
  goodput: shareOrNull.optional(),
  completed: requests,
  failed: requests,
  cancelled: requests.optional(),
  skippedTurns: count.optional(),
  malformedLines: count.optional(),
  outputTokensSource: z.enum(['server', 'estimated', 'mixed']),
  errorsByReason: z.record(z.string(), count),
  telemetry: LevelTelemetrySchema.optional(),
  ttftSplit: TtftSplitSchema.optional(),
  precision: z
    .looseObject({
      rounds: count,
      plannedRounds: count,
      confidence: share,
      figures: z.array(
        z.looseObject({
          figure: z.string(),
          target: share,
          value: numOrNull,
          ci,
          halfWidth: numOrNull,
          reached: z.boolean(),
        }),
      ),
      roundCv: numOrNull,
      reached: z.boolean(),
    })
    .optional(),
  hostPressure: z.looseObject({ windowMs: nonneg, cpuSomeShare: shareOrNull, selfWaitShare: shareOrNull }).optional(),
  responseCache: z
    .looseObject({
      requests: count,
      of: count,
      cachedTokens: nonneg,
      openingTokens: nonneg,
      openingCounted: z.boolean(),
      mostlyCachedRequests: count,
      hitRate: shareOrNull,
    })
    .optional(),
  partial: z.boolean().optional(),
  cutShort: z.string().optional(),
  workers: z.array(WorkerLevelViewSchema).optional(),
  checks: z.array(CheckSchema),
});

const EnvironmentSchema = z.looseObject({
  host: z.looseObject({ hostname: z.string(), os: z.string(), cpus: num, node: z.string() }),
  servebenchVersion: z.string(),
  engine: z.looseObject({
    kind: z.string(),
    version: z.string().optional(),
    model: z.string().optional(),
    url: z.string().optional(),
    simulated: z.boolean(),
    command: z.string().optional(),
  }),
  gpus: z
    .array(
      z.looseObject({
        index: num,
        name: z.string().nullable(),
        memoryMiB: numOrNull,
        driver: z.string().nullable(),
        cudaVersion: z.string().nullable(),
        powerLimitW: numOrNull,
        maxSmClockMhz: numOrNull,
      }),
    )
    .optional(),
});

const SloTargetSchema = z.looseObject({ metric: z.string(), percentile: num, limitMs: num });
const CapacitySchema = z.looseObject({
  mode: z.enum(['concurrency', 'rate']),
  inputLen: num.optional(),
  outputLen: num.optional(),
  serverConfigIndex: num.optional(),
  targets: z.array(SloTargetSchema),
  capacity: numOrNull,
  above: numOrNull,
  outcome: z.string(),
  probes: z.array(
    z.looseObject({
      load: num,
      levelIndex: num,
      verdict: z.string(),
      slos: z.array(z.looseObject({ target: SloTargetSchema, valueMs: numOrNull, ci, verdict: z.string() })),
      goodputReqPerSec: numOrNull,
      outputTokPerSec: numOrNull,
    }),
  ),
  outputTokPerSec: numOrNull,
  costPerMOutputTokUsd: numOrNull,
  saturation: z.looseObject({ load: num, nextLoad: num, cause: z.string(), detail: z.string() }).nullable(),
});

const MessageSchema = z.looseObject({
  atMs: num,
  // Any string: a severity added later must not make an older reader refuse the whole run.
  severity: z.string(),
  text: z.string(),
  count: num.optional(),
  serverConfigIndex: num.optional(),
  levelIndex: num.optional(),
});

/** Every way a run ends (or is still going), as run.json records it. */
const RUN_STATUSES = [
  'running',
  'completed',
  'failed',
  'cancelled',
  'interrupted',
] as const satisfies readonly RunStatus[];

/** run.json as schemaVersion 1 describes it; config is checked loosely (its defaults were applied when written). */
const RunRecordSchema = z.looseObject({
  schemaVersion: z.literal(1),
  id: z.string(),
  label: z.string(),
  startedAt: isoDate,
  finishedAt: isoDate.nullable(),
  status: z.enum(RUN_STATUSES),
  error: z.string().optional(),
  simulated: z.boolean(),
  fromRun: z.looseObject({ id: z.string(), path: z.string() }).optional(),
  config: z.looseObject({
    api: z.string().optional(),
    concurrency: z.array(num),
    inputLen: z.array(num),
    outputLen: z.array(num),
    rounds: num,
    server: z.looseObject({ engine: z.string() }),
  }),
  environment: EnvironmentSchema,
  clock: z.looseObject({ originMonoNs: z.string(), originWall: isoDate }),
  levels: z.array(LevelSchema),
  checks: z.array(CheckSchema),
  capacity: CapacitySchema.optional(),
  capacities: z.array(CapacitySchema).optional(),
  messages: z.array(MessageSchema).optional(),
  messagesLeftOut: num.optional(),
  distributed: DistributedRecordSchema.optional(),
});

/** The newest run.json layout this servebench reads. */
const RUN_SCHEMA_VERSION = 1;

/** zod's first problem as "path: message", for a one-line refusal. */
export function zodProblem(error: ZodError): string {
  const first = error.issues[0];
  if (!first) return 'does not match the run record';
  const where = first.path
    .map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`))
    .join('')
    .replace(/^\./, '');
  const more = error.issues.length > 1 ? ` (first of ${error.issues.length} problems)` : '';
  // The value itself, short, for a number or a word that is wrong (not for a missing field or a whole object).
  const input: unknown = (first as { input?: unknown }).input;
  const got =
    typeof input === 'number' || typeof input === 'string' ? ` (got ${JSON.stringify(input).slice(0, 40)})` : '';
  return `${where || 'top level'}: ${first.message}${got}${more}`;
}

/** Deeper than any record servebench writes (its deepest path is under 10): refused before a reader recurses. */
const RECORD_MAX_DEPTH = 64;

/** The path to the first value nested deeper than `max` (arrays and objects), found without recursion; or null. */
function tooDeep(value: unknown, max: number): string | null {
  const stack: Array<{ v: unknown; depth: number; path: string }> = [{ v: value, depth: 0, path: '' }];
  while (stack.length > 0) {
    const { v, depth, path } = stack.pop() as { v: unknown; depth: number; path: string };
    if (v === null || typeof v !== 'object') continue;
    if (depth >= max) return path.length > 60 ? `${path.slice(0, 60)}…` : path || 'top level';
    for (const [k, child] of Object.entries(v)) {
      if (child !== null && typeof child === 'object')
        stack.push({
          v: child,
          depth: depth + 1,
          path: Array.isArray(v) ? `${path}[${k}]` : path ? `${path}.${k}` : k,
        });
    }
  }
  return null;
}

/** run.json's text as a record, or what is wrong with it, to follow "run.json in DIR " in one line. */
export function decodeRunJson(text: string): { record: RunRecord } | { problem: string } {
  const restore = 'restore it from a copy of the run folder';
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return {
      problem: `is damaged (not valid JSON: ${error instanceof Error ? error.message : String(error)}); ${restore}`,
    };
  }
  const version = (value as { schemaVersion?: unknown } | null)?.schemaVersion;
  if (typeof version === 'number' && version > RUN_SCHEMA_VERSION) {
    const by = (value as { environment?: { servebenchVersion?: unknown } }).environment?.servebenchVersion;
    return {
      problem: `has schemaVersion ${version}, written by a newer servebench${typeof by === 'string' ? ` (${by})` : ''}: update servebench to read it`,
    };
  }
  const deep = tooDeep(value, RECORD_MAX_DEPTH);
  if (deep !== null)
    return { problem: `is damaged (${deep}: nested more than ${RECORD_MAX_DEPTH} deep, no run record is); ${restore}` };
  const parsed = RunRecordSchema.safeParse(value, { reportInput: true });
  if (!parsed.success) return { problem: `is damaged (${zodProblem(parsed.error)}); ${restore}` };
  const record = parsed.data as unknown as RunRecord;
  // Records of earlier versions read in today's shape (the server section's layout changed, its settings did not).
  record.config.server = upgradeServerConfig(record.config.server as never) as unknown as RunRecord['config']['server'];
  return { record };
}
