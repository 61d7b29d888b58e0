import { z } from 'zod';
import { parseSloTargets } from './capacity.js';
import { ENGINE_KINDS, FLASH_ATTENTION_MODES } from './engines.js';

/** Diffusion (block) decoding parameters: part of a diffusion model's identity. */
export const DiffusionConfigSchema = z.object({
  algorithm: z.string().default('LowConfidence'),
  blockSize: z.number().int().positive().default(32),
  threshold: z.number().gt(0).lte(1).default(0.95),
});
export type DiffusionConfig = z.infer<typeof DiffusionConfigSchema>;

export const EngineKindSchema = z.enum(ENGINE_KINDS);
export type { EngineKind } from './engines.js';

/** Everything needed to launch (or attach to) one inference server. */
export const ServerConfigSchema = z.object({
  engine: EngineKindSchema.default('sim'),
  /** attach: base URL of a server someone else runs. */
  url: z.string().url().optional(),
  model: z.string().min(1).optional(),
  servedModelName: z.string().optional(),
  host: z.string().default('127.0.0.1'),
  /** 0 = pick a free port. */
  port: z.number().int().min(0).max(65535).default(0),
  python: z.string().default('python3'),
  dtype: z.string().optional(),
  quantization: z.string().optional(),
  kvCacheDtype: z.string().optional(),
  tensorParallel: z.number().int().positive().optional(),
  maxModelLen: z.number().int().positive().optional(),
  gpuMemoryFraction: z.number().gt(0).lte(1).optional(),
  maxSeqs: z.number().int().positive().optional(),
  prefixCaching: z.boolean().optional(),
  seed: z.number().int().optional(),
  diffusion: DiffusionConfigSchema.optional(),
  env: z.record(z.string(), z.string()).default({}),
  extraArgs: z.array(z.string()).default([]),
  /** Readiness time-out; big models load slowly. */
  startTimeoutMs: z
    .number()
    .int()
    .positive()
    .max(7 * 86_400_000, 'at most 7 days: a server that has not loaded by then never will')
    .default(20 * 60_000),
  /** sim only: profile name and extra sim flags. */
  simProfile: z.string().optional(),
  simArgs: z.array(z.string()).default([]),
  /** llamacpp: the llama-server binary (default: llama-server on PATH). */
  llamaServer: z.string().min(1).optional(),
  /** llamacpp: layers offloaded to the GPU (-ngl). */
  gpuLayers: z.number().int().min(0).optional(),
  /** llamacpp: total context in tokens (-c), shared by the parallel slots. */
  contextSize: z.number().int().positive().optional(),
  /** llamacpp: CPU threads (-t). */
  threads: z.number().int().positive().optional(),
  /** llamacpp: flash attention (-fa on|off|auto). */
  flashAttention: z.enum(FLASH_ATTENTION_MODES).optional(),
  /** llamacpp: continuous batching (on by default in llama-server). */
  continuousBatching: z.boolean().optional(),
  /** command: the server's argv ({port}, {host} and {model} are filled in); never run through a shell. */
  command: z.array(z.string()).min(1).optional(),
  /** command: readiness path that answers 200 once the server is ready (default /health). */
  healthPath: z.string().startsWith('/').optional(),
});
export type ServerConfig = z.infer<typeof ServerConfigSchema>;

export const SloSchema = z.object({
  ttftMs: z.number().positive().optional(),
  tpotMs: z.number().positive().optional(),
  e2eMs: z.number().positive().optional(),
  /** Percentile SLOs for the capacity search, e.g. 'ttft_p95=500,tpot_p95=50' (src/shared/capacity.ts). */
  targets: z
    .string()
    .optional()
    .superRefine((text, ctx) => {
      const parsed = text === undefined ? null : parseSloTargets(text);
      if (parsed && !parsed.ok) ctx.addIssue({ code: 'custom', message: parsed.error });
    }),
});
export type Slo = z.infer<typeof SloSchema>;

/**
 * Upper bounds on what a user can ask, each with the reason: past them a run cannot work (memory, sockets,
 * timers) or cannot mean anything. The CLI, the YAML config and the app share them.
 */
export const LIMITS = {
  concurrency: {
    max: 4096,
    why: 'more requests in flight than one client process can hold and time honestly, and than any engine runs at once',
  },
  rate: { max: 10_000, why: 'more arrivals per second than one client process can schedule on time' },
  requestsPerRound: { max: 100_000, why: 'every prompt of a level is built and held in memory' },
  rounds: { max: 100, why: 'more rounds do not sharpen the spread; raise --requests-per-round instead' },
  warmup: { max: 10_000, why: 'warm-up needs about as many requests as are in flight' },
  tokens: { max: 1_048_576, why: 'longer than the context of any served model, and every prompt is held in memory' },
  totalRequests: { max: 1_000_000, why: 'a run that long cannot finish in any sensible time; split it into runs' },
  promptTokensPerLevel: { max: 50_000_000, why: "a level's prompts are built and held in memory" },
  timeoutMs: { max: 86_400_000, why: 'one request longer than a day is a hung server, not a measurement' },
  clientWorkers: { max: 64, why: 'more worker threads than any machine has cores for' },
  telemetryIntervalMs: { max: 60_000, why: 'samples further apart than a minute miss every throttling episode' },
} as const;

const bound = (key: keyof typeof LIMITS): [number, string] => [
  LIMITS[key].max,
  `at most ${LIMITS[key].max.toLocaleString('en-US')}: ${LIMITS[key].why}`,
];

const positiveList = (key: keyof typeof LIMITS) =>
  z
    .array(
      z
        .number()
        .int()
        .positive()
        .max(...bound(key)),
    )
    .min(1);

/** A benchmark: the sweep, the load shape and the server(s) to run it against. */
export const BenchConfigSchema = z.object({
  label: z.string().default('run'),
  out: z.string().default('runs'),
  model: z.string().optional(),
  api: z.enum(['chat', 'completions']).default('chat'),
  concurrency: positiveList('concurrency').default([1, 4, 16]),
  inputLen: positiveList('tokens').default([512]),
  outputLen: positiveList('tokens').default([24]),
  rounds: z
    .number()
    .int()
    .positive()
    .max(...bound('rounds'))
    .default(3),
  /** Requests per round; default: enough for a p99 interval at every level, at least 4 x concurrency. */
  requestsPerRound: z
    .number()
    .int()
    .positive()
    .max(...bound('requestsPerRound'))
    .optional(),
  /** Warm-up requests per level (discarded); default max(2 x concurrency, 24); 0 turns warm-up off. */
  warmup: z
    .number()
    .int()
    .min(0)
    .max(...bound('warmup'))
    .optional(),
  /** Open loop: Poisson arrivals at this many requests/s (concurrency then caps in-flight requests). */
  rate: z
    .array(
      z
        .number()
        .positive()
        .max(...bound('rate')),
    )
    .optional(),
  /** Open loop only: cap on requests in flight. */
  maxConcurrency: z
    .number()
    .int()
    .positive()
    .max(...bound('concurrency'))
    .optional(),
  /** Multi-turn: each conversation has this many turns, each sending back the history; 1 = single requests. */
  turns: z.number().int().positive().max(1000, 'at most 1,000: longer conversations outgrow any context').default(1),
  /** Multi-turn: pause between a turn's answer and the conversation's next turn, ms. */
  thinkTimeMs: z.number().min(0).max(3_600_000, 'at most 3,600,000 (one hour)').default(0),
  timeoutMs: z
    .number()
    .int()
    .positive()
    .max(...bound('timeoutMs'))
    .default(300_000),
  uniquePrefix: z.boolean().default(true),
  /** Prompts from a file (JSONL prompt/messages, or ShareGPT) instead of synthetic ones. */
  prompts: z.string().min(1).optional(),
  /** --prompts: fit each prompt to --input-len (fixed, the default) or keep the file's lengths. */
  promptLengths: z.enum(['fixed', 'file']).optional(),
  /** --prompts: ask --output-len (fixed, the default) or the file's output length per request. */
  outputLengths: z.enum(['fixed', 'file']).optional(),
  /** Shared prefix: this many groups of requests, each sharing a system prompt of prefixLen tokens. */
  prefixGroups: z
    .number()
    .int()
    .positive()
    .max(...bound('requestsPerRound'))
    .optional(),
  prefixLen: z
    .number()
    .int()
    .positive()
    .max(...bound('tokens'))
    .optional(),
  /** Timed trace replay (Mooncake JSONL): one open-loop level whose arrivals and lengths come from the file. */
  trace: z.string().min(1).optional(),
  /** --trace: replay this many times faster than recorded. */
  traceSpeed: z.number().positive().max(1_000_000).optional(),

  ignoreEos: z.boolean().default(true),
  temperature: z.number().min(0).default(0),
  seed: z.number().int().default(0),
  gpuPricePerHour: z.number().positive().optional(),
  utilization: z.number().gt(0).lte(1).optional(),
  slo: SloSchema.optional(),
  /** Search for the highest concurrency (or rate) meeting every SLO instead of sweeping the listed levels. */
  findCapacity: z.boolean().default(false),
  /** Largest concurrency (closed loop) or rate (open loop) the capacity search tries. */
  capacityMax: z.number().positive().optional(),
  apiKey: z.string().optional(),
  clientWorkers: z
    .number()
    .int()
    .min(0)
    .max(...bound('clientWorkers'))
    .optional(),
  telemetryIntervalMs: z
    .number()
    .int()
    .positive()
    .max(...bound('telemetryIntervalMs'))
    .default(500),
  nvidiaSmi: z.string().optional(),
  dcgmUrl: z.string().url().optional(),
  /** Wait before each level until the GPU is idle and cooler than this (°C). */
  coolDownToC: z.number().positive().optional(),
  server: ServerConfigSchema.prefault({}),
  /** Server sweep: each entry overrides server fields; the server restarts between entries. */
  serverVariants: z.array(z.record(z.string(), z.unknown())).optional(),
});
export type BenchConfig = z.infer<typeof BenchConfigSchema>;
export type BenchConfigInput = z.input<typeof BenchConfigSchema>;
