import { z } from 'zod';
import type { ZodError } from 'zod';
import type { RunRecord } from './run-record.js';

// The run record's zod schema, for reading run.json back. Objects are loose: a field added later within
// schemaVersion 1 ("add, never rename") must not make an older reader refuse the file.

const num = z.number();
const numOrNull = z.number().nullable();
const ci = z.tuple([num, num]).nullable();

const CheckSchema = z.looseObject({
  id: z.string(),
  status: z.enum(['pass', 'warn', 'fail']),
  detail: z.string(),
  code: z.string().optional(),
  facts: z.record(z.string(), z.union([z.number(), z.string(), z.boolean(), z.null()])).optional(),
});

const SummarySchema = z.looseObject({
  n: num,
  mean: numOrNull,
  std: numOrNull,
  min: numOrNull,
  max: numOrNull,
  p50: numOrNull,
  p90: numOrNull,
  p95: numOrNull,
  p99: numOrNull,
  p95Ci: ci,
  p99Ci: ci,
});

const RoundSchema = z.looseObject({
  round: num,
  outputTokPerSec: num,
  totalTokPerSec: num,
  reqPerSec: num,
  windowMs: num,
  completed: num,
  failed: num,
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

const LevelSchema = z.looseObject({
  serverConfigIndex: num,
  serverVariant: z.record(z.string(), z.union([z.string(), num, z.boolean()])).optional(),
  concurrency: num,
  rate: num.optional(),
  burst: num.optional(),
  inputLen: num,
  outputLen: num,
  startMs: num,
  endMs: num,
  warmupRequests: num,
  rounds: z.array(RoundSchema),
  ttftMs: SummarySchema,
  tpotMs: SummarySchema,
  itlMs: SummarySchema,
  itlPerTokenMs: SummarySchema,
  e2eMs: SummarySchema,
  tokensPerChunk: SummarySchema,
  scheduleLagMs: SummarySchema.optional(),
  byTurn: z.array(z.looseObject({ turn: num, inputTokens: numOrNull, ttftMs: SummarySchema })).optional(),
  // null when the level was cut short before a complete round (no throughput from a crash).
  outputTokPerSec: numOrNull,
  totalTokPerSec: numOrNull,
  reqPerSec: numOrNull,
  roundCv: numOrNull,
  costPerMOutputTokUsd: num.optional(),
  costPerMOutputTokAtUtilizationUsd: num.optional(),
  goodput: numOrNull.optional(),
  completed: num,
  failed: num,
  cancelled: num.optional(),
  skippedTurns: num.optional(),
  malformedLines: num.optional(),
  outputTokensSource: z.enum(['server', 'estimated', 'mixed']),
  errorsByReason: z.record(z.string(), num),
  telemetry: LevelTelemetrySchema.optional(),
  responseCache: z
    .looseObject({
      requests: num,
      of: num,
      cachedTokens: num,
      openingTokens: num,
      openingCounted: z.boolean(),
      mostlyCachedRequests: num,
      hitRate: numOrNull,
    })
    .optional(),
  partial: z.boolean().optional(),
  cutShort: z.string().optional(),
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

/** run.json as schemaVersion 1 describes it; config is checked loosely (its defaults were applied when written). */
export const RunRecordSchema = z.looseObject({
  schemaVersion: z.literal(1),
  id: z.string(),
  label: z.string(),
  startedAt: z.string(),
  finishedAt: z.string().nullable(),
  status: z.string(),
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
  clock: z.looseObject({ originMonoNs: z.string(), originWall: z.string() }),
  levels: z.array(LevelSchema),
  checks: z.array(CheckSchema),
  capacity: CapacitySchema.optional(),
  capacities: z.array(CapacitySchema).optional(),
  messages: z.array(MessageSchema).optional(),
  messagesLeftOut: num.optional(),
});

/** The newest run.json layout this servebench reads. */
export const RUN_SCHEMA_VERSION = 1;

/** zod's first problem as "path: message", for a one-line refusal. */
export function zodProblem(error: ZodError): string {
  const first = error.issues[0];
  if (!first) return 'does not match the run record';
  const where = first.path
    .map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`))
    .join('')
    .replace(/^\./, '');
  const more = error.issues.length > 1 ? ` (first of ${error.issues.length} problems)` : '';
  return `${where || 'top level'}: ${first.message}${more}`;
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
  const parsed = RunRecordSchema.safeParse(value);
  if (!parsed.success) return { problem: `is damaged (${zodProblem(parsed.error)}); ${restore}` };
  return { record: parsed.data as unknown as RunRecord };
}
