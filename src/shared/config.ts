import { DEFAULT_PRECISION_FIGURES, parsePrecision } from './precision.js';
import { z } from 'zod';
import { SLO_NAMES, parseSloTargets } from './capacity.js';
import { ENDPOINT_KINDS } from './endpoint-kinds.js';
import { atMost, setting } from './setting.js';
import { TOOL_CHOICE_MODES, parseResponseFormat } from './structured-output.js';
import { dcgmUrls } from './telemetry.js';
import {
  DEFAULT_ENGINE,
  EngineKindSchema,
  ServerConfigSchema,
  type ServerConfig,
  type ServerConfigInput,
} from './server-schema.js';

export { EngineKindSchema, ServerConfigSchema, type ServerConfig };
export type { EngineKind } from './server-schema.js';

const isHttpUrl = (u: string): boolean => z.url({ protocol: /^https?$/ }).safeParse(u).success;
/** A URL with a user name or password (servebench redacts one URL's; a list's stay out). */
const hasCredentials = (u: string): boolean => {
  const parsed = URL.parse(u);
  return parsed !== null && (parsed.username !== '' || parsed.password !== '');
};

/** The engine setting: the union's discriminator (--engine; attach is chosen by --url instead). */
export const ENGINE_SETTING = setting(EngineKindSchema.default(DEFAULT_ENGINE), {
  label: 'Engine',
  help: 'engine to launch',
  group: 'server',
  syntax: 'engine',
});

const SLO_GROUP = 'load';

const SloSchema = z.object({
  ttftMs: setting(z.number().positive().optional(), {
    flag: 'slo-ttft-ms',
    label: 'SLO TTFT (ms)',
    metavar: 'MS',
    help: 'service-level objective on time to first token: goodput = share meeting all',
    unit: 'ms',
    group: SLO_GROUP,
    advanced: true,
    placeholder: 'none',
  }),
  tpotMs: setting(z.number().positive().optional(), {
    flag: 'slo-tpot-ms',
    label: 'SLO TPOT (ms)',
    metavar: 'MS',
    help: 'service-level objective on time per output token',
    unit: 'ms',
    group: SLO_GROUP,
    advanced: true,
    placeholder: 'none',
  }),
  e2eMs: setting(z.number().positive().optional(), {
    flag: 'slo-e2e-ms',
    label: 'SLO E2E (ms)',
    metavar: 'MS',
    help: 'service-level objective on end-to-end latency',
    unit: 'ms',
    group: SLO_GROUP,
    advanced: true,
    placeholder: 'none',
  }),
  /** Percentile SLOs for the capacity search, e.g. 'ttft_p95=500,tpot_p95=50' (src/shared/capacity.ts). */
  targets: setting(
    z
      .string()
      .optional()
      .superRefine((text, ctx) => {
        const parsed = text === undefined ? null : parseSloTargets(text);
        if (parsed && !parsed.ok) ctx.addIssue({ code: 'custom', message: parsed.error });
      }),
    {
      flag: 'slo',
      label: 'SLOs (percentiles)',
      metavar: 'ttft_p95=MS,tpot_p95=MS',
      help: `percentile SLOs (${SLO_NAMES.join(', ')}) for --find-capacity and goodput`,
      group: SLO_GROUP,
      placeholder: 'ttft_p95=500,tpot_p95=50',
    },
  ),
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

const bound = (key: keyof typeof LIMITS): [number, string] => atMost(LIMITS[key].max, LIMITS[key].why);

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

/** The load: levels, lengths, rounds and the workload. */
const LOAD = {
  api: setting(z.enum(ENDPOINT_KINDS).default('chat'), {
    label: 'Endpoint',
    help: 'endpoint to load: chat and completions stream tokens; embeddings, rerank and score (vLLM /score) answer a batch of --batch-size inputs whole',
    group: 'load',
    condition: true,
    advanced: true,
  }),
  /** Pooling endpoints (embeddings, rerank): inputs (documents) per request, each of --input-len tokens. */
  batchSize: setting(
    z
      .number()
      .int()
      .positive()
      .max(...atMost(2048, 'more inputs in one request than any pooling server batches'))
      .default(1),
    {
      label: 'Inputs per request',
      metavar: 'N',
      help: 'embeddings, rerank and score only: inputs (documents) per request, each of --input-len tokens exactly',
      group: 'load',
      condition: true,
      advanced: true,
    },
  ),
  apiKey: setting(z.string().optional(), {
    label: 'API key',
    metavar: 'KEY',
    help: 'bearer token (or env SERVEBENCH_API_KEY / OPENAI_API_KEY); never written to disk',
    group: 'load',
    advanced: true,
  }),
  concurrency: setting(positiveList('concurrency').default([1, 4, 16]), {
    label: 'Concurrency',
    metavar: '1,2,4,8,16',
    help: 'closed-loop levels: exactly C requests in flight',
    unit: 'requests',
    group: 'load',
    prefill: true,
  }),
  /** Open loop: Poisson arrivals at this many requests/s (concurrency then caps in-flight requests). */
  rate: setting(
    z
      .array(
        z
          .number()
          .positive()
          .max(...bound('rate')),
      )
      .optional(),
    {
      label: 'Rate (req/s)',
      metavar: '2,4,8',
      help: 'open-loop levels instead: Poisson arrivals of R requests/s (with --turns K: R/K conversations/s); --max-concurrency caps in-flight',
      unit: 'req/s',
      group: 'load',
      advanced: true,
      placeholder: 'closed loop',
    },
  ),
  /** Open loop only: cap on requests in flight. */
  maxConcurrency: setting(
    z
      .number()
      .int()
      .positive()
      .max(...bound('concurrency'))
      .optional(),
    {
      label: 'Max in flight',
      metavar: 'N',
      help: 'open loop only (--rate or --trace): cap on requests in flight',
      group: 'load',
      advanced: true,
      placeholder: 'no cap',
    },
  ),
  inputLen: setting(positiveList('tokens').default([512]), {
    label: 'Input tokens',
    metavar: '512[,2048]',
    help: "prompt tokens, exact: calibrated with the server's tokenizer",
    unit: 'tokens',
    group: 'load',
    prefill: true,
  }),
  outputLen: setting(positiveList('tokens').default([24]), {
    label: 'Output tokens',
    metavar: '256[,1024]',
    help: 'output tokens, forced with max_tokens = min_tokens and ignore_eos',
    unit: 'tokens',
    group: 'load',
    prefill: true,
  }),
  rounds: setting(
    z
      .number()
      .int()
      .positive()
      .max(...bound('rounds'))
      .default(3),
    {
      label: 'Rounds',
      metavar: 'N',
      help: 'rounds per level; a spread over 15 % between them fails a check',
      group: 'load',
      prefill: true,
    },
  ),
  /** Requests per round; default: enough for a p99 interval at every level, at least 4 x concurrency. */
  requestsPerRound: setting(
    z
      .number()
      .int()
      .positive()
      .max(...bound('requestsPerRound'))
      .optional(),
    {
      label: 'Requests / round',
      metavar: 'N',
      help: 'default max(ceil(299 / rounds), 4 x concurrency): enough samples for p95 and p99 intervals',
      group: 'load',
      placeholder: 'auto: ≥ 299 per level, ≥ 4×c',
    },
  ),
  /** Stop a level's rounds once its percentiles are this precise (src/shared/precision.ts, docs/statistics.md). */
  precision: setting(
    z
      .string()
      .optional()
      .superRefine((text, ctx) => {
        const parsed = text === undefined ? null : parsePrecision(text);
        if (parsed && !parsed.ok) ctx.addIssue({ code: 'custom', message: parsed.error });
      }),
    {
      label: 'Precision',
      metavar: '5% | ttft_p95=5%,tpot_p95=3%',
      help: `run each level's rounds until the 95 % interval of each named percentile (bare share: ${DEFAULT_PRECISION_FIGURES.join(', ')}) is within that share of its value and the rounds agree; --rounds is the most`,
      group: 'load',
      advanced: true,
      placeholder: 'off: every planned round',
    },
  ),
  /** Warm-up requests per level (discarded); default max(2 x concurrency, 24); 0 turns warm-up off. */
  warmup: setting(
    z
      .number()
      .int()
      .min(0)
      .max(...bound('warmup'))
      .optional(),
    {
      off: 'no-warmup',
      label: 'Warm-up',
      metavar: 'N',
      help: 'warm-up requests per level, discarded (default max(2 x concurrency, 24): warms the client too)',
      group: 'load',
      placeholder: 'auto: max(2×c, 24)',
    },
  ),
  /** Multi-turn: each conversation has this many turns, each sending back the history; 1 = single requests. */
  turns: setting(
    z
      .number()
      .int()
      .positive()
      .max(...atMost(1000, 'longer conversations outgrow any context'))
      .default(1),
    {
      label: 'Turns per conversation',
      metavar: 'K',
      help: 'multi-turn: conversations of K turns, each sending back the history (chat API); --concurrency counts conversations, --rate requests (turns); requests per round and warm-up round up to whole conversations; not with --prompts, --trace or --prefix-groups',
      group: 'load',
      condition: true,
      advanced: true,
      placeholder: '1: single requests',
    },
  ),
  /** Multi-turn: pause between a turn's answer and the conversation's next turn, ms. */
  thinkTimeMs: setting(
    z
      .number()
      .min(0)
      .max(...atMost(3_600_000, 'one hour'))
      .default(0),
    {
      label: 'Think time (ms)',
      metavar: 'MS',
      help: "multi-turn: pause between a turn's answer and the next turn",
      unit: 'ms',
      group: 'load',
      advanced: true,
    },
  ),
  timeoutMs: setting(
    z
      .number()
      .int()
      .positive()
      .max(...bound('timeoutMs'))
      .default(300_000),
    {
      flag: 'timeout',
      label: 'Request time-out (s)',
      metavar: 'S',
      help: 'per-request time-out in seconds',
      unit: 's',
      group: 'load',
      syntax: 'seconds',
      advanced: true,
    },
  ),
  uniquePrefix: setting(z.boolean().default(true), {
    flag: 'no-unique-prefix',
    sets: false,
    label: 'Unique prompt prefix',
    help: 'same prompt for all requests: measures the prefix-cached case',
    group: 'load',
    condition: true,
    advanced: true,
  }),
  /** Prompts from a file (JSONL prompt/messages, or ShareGPT) instead of synthetic ones. */
  prompts: setting(z.string().min(1).optional(), {
    label: 'Prompt file',
    metavar: 'FILE',
    help: 'prompts from a JSONL file ({"prompt"} or {"messages"} lines, optional "output_len") or ShareGPT JSON',
    group: 'load',
    trust: 'file',
    condition: true,
    advanced: true,
    placeholder: 'synthetic prompts',
  }),
  /** --prompts: fit each prompt to --input-len (fixed, the default) or keep the file's lengths. */
  promptLengths: setting(z.enum(['fixed', 'file']).optional(), {
    label: 'Prompt lengths',
    help: "--prompts: pad or cut each prompt to --input-len with the server's tokenizer (fixed), or keep it (file)",
    group: 'load',
    condition: true,
    advanced: true,
    placeholder: 'fixed',
  }),
  /** --prompts: ask --output-len (fixed, the default) or the file's output length per request. */
  outputLengths: setting(z.enum(['fixed', 'file']).optional(), {
    label: 'Output lengths',
    help: "--prompts: every request asks --output-len tokens (fixed), or the file's output_len / ShareGPT reply length",
    group: 'load',
    condition: true,
    advanced: true,
    placeholder: 'fixed',
  }),
  /** Shared prefix: this many groups of requests, each sharing a system prompt of prefixLen tokens. */
  prefixGroups: setting(
    z
      .number()
      .int()
      .positive()
      .max(...bound('requestsPerRound'))
      .optional(),
    {
      label: 'Prefix groups',
      metavar: 'N',
      help: 'shared prefix: N groups of requests, each sharing a system prompt of --prefix-len tokens (prefix cache on purpose)',
      group: 'load',
      condition: true,
      advanced: true,
      placeholder: 'none',
    },
  ),
  prefixLen: setting(
    z
      .number()
      .int()
      .positive()
      .max(...bound('tokens'))
      .optional(),
    {
      label: 'Prefix length',
      metavar: 'P',
      help: "shared prefix: tokens of each group's system prompt, part of --input-len",
      unit: 'tokens',
      group: 'load',
      condition: true,
      advanced: true,
      placeholder: 'none',
    },
  ),
  /** Timed trace replay (Mooncake JSONL): one open-loop level whose arrivals and lengths come from the file. */
  trace: setting(z.string().min(1).optional(), {
    label: 'Trace file',
    metavar: 'FILE',
    help: 'replay a timed trace (Mooncake JSONL: timestamp ms, input_length, output_length, hash_ids) as one open-loop level, once per round (--requests-per-round N: its first N arrivals; no warm-up unless --warmup); not with --rate, --find-capacity or length lists',
    group: 'load',
    trust: 'file',
    condition: true,
    advanced: true,
    placeholder: 'no trace',
  }),
  /** --trace: replay this many times faster than recorded. */
  traceSpeed: setting(z.number().positive().max(1_000_000).optional(), {
    label: 'Trace speed',
    metavar: 'X',
    help: '--trace: replay X times faster (2 halves every gap between arrivals)',
    group: 'load',
    condition: true,
    advanced: true,
    placeholder: '1',
  }),
  ignoreEos: setting(z.boolean().default(true), {
    flag: 'allow-eos',
    sets: false,
    label: 'Ignore EOS',
    help: 'let the model stop early (no ignore_eos)',
    group: 'load',
    condition: true,
    advanced: true,
  }),
  temperature: setting(z.number().min(0).default(0), {
    label: 'Temperature',
    metavar: 'T',
    help: 'sampling temperature',
    group: 'load',
    condition: true,
    advanced: true,
  }),
  /** Structured output: every answer must be JSON of a schema, match a regex, or be one of a few choices. */
  responseFormat: setting(
    z
      .string()
      .optional()
      .superRefine((text, ctx) => {
        const parsed = text === undefined ? null : parseResponseFormat(text);
        if (parsed && !parsed.ok) ctx.addIssue({ code: 'custom', message: parsed.error });
      }),
    {
      label: 'Response format',
      metavar: 'json-schema=FILE | regex=RE | choice=A,B',
      help: 'structured output (chat and completions): JSON of a JSON Schema file, a regex the whole answer matches, or one of the choices; the output is checked and its validity rate reported; the model may stop early (no ignore_eos)',
      group: 'load',
      condition: true,
      advanced: true,
      placeholder: 'free text',
    },
  ),
  /** Tool calls: a JSON file of OpenAI-style tools (a list of {type: function, function: {name, parameters}}). */
  tools: setting(z.string().min(1).optional(), {
    label: 'Tools file',
    metavar: 'FILE',
    help: "tool calls (chat only): a JSON list of OpenAI tools ({type: 'function', function: {name, parameters}}); each call's arguments are checked against its parameters schema",
    group: 'load',
    condition: true,
    advanced: true,
    placeholder: 'no tools',
  }),
  /** --tools: auto, required, none, or the name of the one function the model must call. */
  toolChoice: setting(z.string().min(1).optional(), {
    label: 'Tool choice',
    metavar: 'auto|required|none|NAME',
    help: `with --tools: ${TOOL_CHOICE_MODES.join(', ')}, or the name of the function every answer must call (default required: each answer is a call)`,
    group: 'load',
    condition: true,
    advanced: true,
    placeholder: 'required',
  }),
  /** --lora: how each request (a conversation: each conversation) picks its adapter. */
  loraPick: setting(z.enum(['round-robin', 'random']).default('round-robin'), {
    label: 'LoRA pick',
    help: 'with --lora: adapters in turn by weight (round-robin), or drawn by weight from the seed (random)',
    group: 'load',
    condition: true,
    advanced: true,
  }),
  /** --url A,B: how the client spreads requests over the replicas. */
  balance: setting(z.enum(['round-robin', 'least-outstanding']).default('round-robin'), {
    label: 'Replica balance',
    help: 'with several --url replicas: send to each in turn (round-robin), or to the one with the fewest requests in flight (least-outstanding)',
    group: 'load',
    condition: true,
    advanced: true,
  }),
  /** Empty the engine's prefix cache before each level, where it can (vLLM, SGLang, the simulator). */
  cacheReset: setting(z.boolean().default(true), {
    off: 'no-cache-reset',
    label: 'Reset cache per level',
    help: "empty the server's prefix cache before each level where the engine allows it (vLLM POST /reset_prefix_cache with VLLM_SERVER_DEV_MODE=1, SGLang POST /flush_cache), so a level does not ride on the one before; recorded per level",
    group: 'load',
    advanced: true,
  }),
};

/** Capacity search and the client. */
const SEARCH = {
  /** Search for the highest concurrency (or rate) meeting every SLO instead of sweeping the listed levels. */
  findCapacity: setting(z.boolean().default(false), {
    label: 'Find capacity',
    help: 'search for the highest concurrency (or --rate) meeting every --slo: double until a level fails, then bisect; one search per --vary configuration and per --input-len/--output-len pair',
    group: 'load',
  }),
  /** Largest concurrency (closed loop) or rate (open loop) the capacity search tries. */
  capacityMax: setting(z.number().positive().optional(), {
    label: 'Capacity search bound',
    metavar: 'N',
    help: 'largest concurrency (closed loop) or req/s (open loop) the capacity search tries (default 512 and 1000)',
    group: 'load',
    advanced: true,
    placeholder: 'c=512 or 1000 req/s',
  }),
  clientWorkers: setting(
    z
      .number()
      .int()
      .min(0)
      .max(...bound('clientWorkers'))
      .optional(),
    {
      label: 'Client workers',
      metavar: 'N',
      help: 'load-generator worker threads (default: 0; cores/4, at most 4, when a level reaches 128 concurrent requests on a machine with 8 or more cores)',
      group: 'load',
      advanced: true,
      placeholder: 'auto',
    },
  ),
};

/** Cost, telemetry and where the run folder goes. */
const REPORT = {
  gpuPricePerHour: setting(z.number().positive().optional(), {
    label: 'GPU price ($/hour)',
    metavar: 'USD',
    help: 'price of the GPU(s); gives cost per 1M output tokens',
    unit: 'USD/h',
    group: 'cost',
    placeholder: 'e.g. 2.00',
  }),
  utilization: setting(z.number().gt(0).lte(1).optional(), {
    label: 'Utilization (%)',
    metavar: 'U',
    help: 'average utilisation (0-1] to discount the peak cost by',
    group: 'cost',
    percent: true,
    placeholder: 'e.g. 60',
  }),
  telemetryIntervalMs: setting(
    z
      .number()
      .int()
      .positive()
      .max(...bound('telemetryIntervalMs'))
      .default(500),
    {
      flag: 'telemetry-interval',
      label: 'Telemetry interval (ms)',
      metavar: 'MS',
      help: 'nvidia-smi sampling interval',
      unit: 'ms',
      group: 'telemetry',
      advanced: true,
    },
  ),
  nvidiaSmi: setting(z.string().optional(), {
    label: 'nvidia-smi',
    metavar: 'PATH',
    help: "nvidia-smi to use (or env SERVEBENCH_NVIDIA_SMI); wins over the simulator's fake GPU",
    group: 'telemetry',
    trust: 'program',
    advanced: true,
    placeholder: 'nvidia-smi on PATH',
  }),
  dcgmUrl: setting(
    z
      .string()
      .refine((v) => dcgmUrls(v).length > 0 && dcgmUrls(v).every(isHttpUrl), {
        error: 'must be http(s) URLs such as http://10.0.0.5:9400/metrics, one per node, comma-separated',
      })
      .refine((v) => dcgmUrls(v).length === 1 || !dcgmUrls(v).some(hasCredentials), {
        error: 'must carry no user name or password when it names several exporters',
      })
      .optional(),
    {
      label: 'DCGM exporter',
      metavar: 'URL[,URL]',
      help: "DCGM exporters of the server's GPUs, one URL per node, comma-separated or the flag repeated (remote GPUs, attach mode)",
      group: 'telemetry',
      advanced: true,
      repeatJoins: true,
      placeholder: 'http://10.0.0.5:9400/metrics',
    },
  ),
  /** Wait before each level until the GPU is idle and cooler than this (°C). */
  coolDownToC: setting(z.number().positive().optional(), {
    flag: 'cool-down-to',
    label: 'Cool down to (°C)',
    metavar: 'C',
    help: 'before each level wait until the GPU is idle and at or below C degrees',
    unit: '°C',
    group: 'telemetry',
    advanced: true,
    placeholder: 'no wait',
  }),
  out: setting(z.string().default('runs'), {
    label: 'Output folder',
    metavar: 'DIR',
    help: 'parent folder of run folders',
    group: 'output',
    appSetsIt: 'the runs folder in Settings',
  }),
  label: setting(z.string().default('run'), {
    label: 'Label',
    metavar: 'NAME',
    help: 'run label, part of the folder name',
    group: 'output',
    prefill: true,
  }),
};

/** A benchmark: the sweep, the load shape and the server(s) to run it against. */
export const BenchConfigSchema = z.object({
  out: REPORT.out,
  label: REPORT.label,
  model: z.string().optional(),
  ...LOAD,
  seed: z.number().int().default(0),
  gpuPricePerHour: REPORT.gpuPricePerHour,
  utilization: REPORT.utilization,
  slo: SloSchema.optional(),
  ...SEARCH,
  telemetryIntervalMs: REPORT.telemetryIntervalMs,
  nvidiaSmi: REPORT.nvidiaSmi,
  dcgmUrl: REPORT.dcgmUrl,
  coolDownToC: REPORT.coolDownToC,
  server: ServerConfigSchema.prefault({}),
  /** Server sweep: each entry overrides server fields; the server restarts between entries. */
  serverVariants: z.array(z.record(z.string(), z.unknown())).optional(),
});
type Parsed = z.infer<typeof BenchConfigSchema>;
export type BenchConfig = Omit<Parsed, 'server'> & { server: ServerConfig };
export type BenchConfigInput = Omit<z.input<typeof BenchConfigSchema>, 'server'> & { server?: ServerConfigInput };
