import { z } from 'zod';
import { STRUCTURED_PROBLEMS, type RequestRecord, type UsageProblem } from './request-record.js';
import type { ClientSample, EngineSample, GpuSample } from './telemetry.js';
import type { ThrottleClass } from './run-record.js';

// The zod schemas of the run folder's JSONL lines (requests.jsonl, telemetry.jsonl), beside run.json's own
// (run-record-schema.ts). Objects are loose: a field added later (ttftMs, e2eMs ...) must not make an older
// reader refuse the line, and a line from an older writer without an optional field still reads.

const num = z.number().finite();
const numOrNull = num.nullable();
const sourceSchema = z.enum(['server', 'estimated']);

const USAGE_FIELDS = ['completion_tokens', 'prompt_tokens', 'cached_tokens', 'reasoning_tokens'] as const;
const USAGE_CODES = [
  'not-a-count',
  'not-a-number',
  'above-max-tokens',
  'below-chunks',
  'above-request-size',
  'above-prompt-tokens',
  'above-completion-tokens',
] as const;

const UsageProblemSchema = z.looseObject({
  field: z.enum(USAGE_FIELDS),
  code: z.enum(USAGE_CODES),
  value: numOrNull,
  bound: num.optional(),
  sentAs: z.string().optional(),
});

/** One line of requests.jsonl: a measured request (see RequestRecord). */
export const RequestLineSchema = z.looseObject({
  id: num,
  requestTag: z.string(),
  levelIndex: z.number().int().min(0),
  round: z.number().int(),
  warmup: z.boolean(),
  scheduledMs: num.optional(),
  sendMs: num,
  firstTokenMs: numOrNull,
  endMs: numOrNull,
  chunks: z.array(z.tuple([num, num])),
  nOut: num,
  nOutSource: sourceSchema,
  chunkTokensSource: sourceSchema,
  clientChunkCount: num,
  nIn: numOrNull,
  expectedIn: num,
  expectedOut: num,
  finishReason: z.string().nullable(),
  ok: z.boolean(),
  error: z.string().optional(),
  errorKind: z.string().optional(),
  httpStatus: num.optional(),
  malformedLines: num,
  firstContentMs: numOrNull.optional(),
  nReasoning: num.optional(),
  nContent: num.optional(),
  nReasoningSource: sourceSchema.optional(),
  expectedInSource: sourceSchema.optional(),
  workload: z
    .looseObject({
      group: num.optional(),
      conversation: num.optional(),
      turn: num.optional(),
      sourceIndex: num.optional(),
    })
    .optional(),
  serverPromptMs: num.optional(),
  serverDecodeMs: num.optional(),
  worker: num.optional(),
  adapter: z.string().max(200).optional(),
  structured: z
    .looseObject({
      valid: z.boolean(),
      problem: z.enum(STRUCTURED_PROBLEMS).optional(),
      detail: z.string().max(400).optional(),
      toolCalls: num.optional(),
    })
    .optional(),
  replica: num.optional(),
  cachedPromptTokens: num.optional(),
  usageProblems: z.array(UsageProblemSchema).optional(),
  http: z
    .looseObject({
      connectStartMs: num.optional(),
      connectEndMs: num.optional(),
      requestSentMs: numOrNull,
      headersMs: numOrNull,
      firstByteMs: numOrNull,
    })
    .optional(),
  // Derived per-request latencies, written by newer servebench versions only; older lines lack them.
  ttftMs: numOrNull.optional(),
  e2eMs: numOrNull.optional(),
});

const rejectedSchema = z.record(z.string(), z.string()).optional();
const THROTTLE_CLASSES = ['idle', 'full-speed', 'power-cap', 'thermal', 'hw-slowdown', 'unknown'] as const;
/** The server configuration a sample was taken under (absent in older folders). */
const tagged = { serverConfigIndex: z.number().int().min(0).optional() };

const GpuLineSchema = z.looseObject({
  kind: z.literal('gpu'),
  ...tagged,
  tMs: num,
  gpu: num,
  node: z.string().optional(),
  nodeGpu: num.optional(),
  smClockMhz: numOrNull,
  maxSmClockMhz: numOrNull,
  memClockMhz: numOrNull,
  tempC: numOrNull,
  memTempC: numOrNull,
  powerW: numOrNull,
  powerLimitW: numOrNull,
  utilPct: numOrNull,
  memUsedMiB: numOrNull,
  memTotalMiB: numOrNull,
  pstate: z.string().nullable(),
  throttleMask: numOrNull,
  class: z.enum(THROTTLE_CLASSES),
  rejected: rejectedSchema,
});

const EngineLineSchema = z.looseObject({
  kind: z.literal('engine'),
  ...tagged,
  tMs: num,
  running: numOrNull,
  waiting: numOrNull,
  kvUsage: numOrNull,
  preemptionsTotal: numOrNull,
  prefixCacheHitsTotal: numOrNull,
  prefixCacheQueriesTotal: numOrNull.optional(),
  generationTokensTotal: numOrNull,
  requestDecodeSecondsSum: numOrNull.optional(),
  requestDecodeCount: numOrNull.optional(),
  requestQueueSecondsSum: numOrNull.optional(),
  requestQueueCount: numOrNull.optional(),
  requestPrefillSecondsSum: numOrNull.optional(),
  requestPrefillCount: numOrNull.optional(),
  ttftSecondsSum: numOrNull.optional(),
  ttftCount: numOrNull.optional(),
  rejected: rejectedSchema,
});

const ClientLineSchema = z.looseObject({
  kind: z.literal('client'),
  ...tagged,
  tMs: num,
  loopLagMs: num,
  cpuPct: num,
});

/** One line of telemetry.jsonl: a GPU, engine or client sample, told apart by `kind`. */
export const TelemetryLineSchema = z.discriminatedUnion('kind', [GpuLineSchema, EngineLineSchema, ClientLineSchema]);

/** A line of telemetry.jsonl as read back. */
export type TelemetryLineRecord = z.infer<typeof TelemetryLineSchema>;

// The schemas read exactly the records the writers write: these fail to compile when the two drift apart.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Assert<T extends true> = T;
type KeysOf<S extends { shape: object }> = Exclude<keyof S['shape'], 'kind' | 'serverConfigIndex'>;
type _RequestLineMatches = Assert<
  Same<
    Exclude<keyof (typeof RequestLineSchema)['shape'], 'ttftMs' | 'e2eMs'>,
    Exclude<keyof RequestRecord, 'ttftMs' | 'e2eMs'>
  >
>;
type _RequestLineReads = Assert<z.infer<typeof RequestLineSchema> extends RequestRecord ? true : false>;
type _GpuLineMatches = Assert<Same<KeysOf<typeof GpuLineSchema>, keyof GpuSample>>;
type _EngineLineMatches = Assert<Same<KeysOf<typeof EngineLineSchema>, keyof EngineSample>>;
type _ClientLineMatches = Assert<Same<KeysOf<typeof ClientLineSchema>, keyof ClientSample>>;
type _UsageProblemMatches = Assert<Same<z.infer<typeof UsageProblemSchema>['code'], UsageProblem['code']>>;
type _ThrottleClassMatches = Assert<Same<(typeof THROTTLE_CLASSES)[number], ThrottleClass>>;
