/**
 * Every setting of a run, described once: its place in the config, its `servebench run` flag and help,
 * its unit, the engines that use it, whether `--vary` can sweep it, and the app's control for it. The
 * CLI's flags and help, the `--vary` keys, the YAML key check and the app's new-run form are generated
 * from this table (the zod schemas in config.ts stay the last word on values and defaults).
 */
import { BenchConfigSchema, DiffusionConfigSchema, LIMITS } from './config.js';
import { FLASH_ATTENTION_MODES, LAUNCHABLE_ENGINES, type EngineKind } from './engines.js';

/** How a value is written and read. */
export type FieldType =
  | 'text'
  | 'int'
  | 'number'
  | 'fraction'
  | 'int-list'
  | 'number-list'
  | 'switch'
  | 'seconds'
  | 'duration'
  | 'choice'
  | 'engine'
  | 'url'
  | 'command'
  | 'args'
  | 'env';

/** The app's control for a field; 'cli-only' fields are flags and YAML keys only. */
export type UiControl =
  'engine' | 'text' | 'number' | 'list' | 'select' | 'toggle' | 'percent' | 'args' | 'env' | 'cli-only';

/** Where the field is shown: the help section and the app's card. */
export type FieldGroup = 'server' | 'diffusion' | 'llamacpp' | 'command' | 'load' | 'cost' | 'telemetry' | 'output';

/** One setting. */
export interface FieldDescriptor {
  /** The app shows it under "More settings" (seldom changed). */
  readonly advanced?: boolean;
  /** The app form's key (unique). */
  readonly name: string;
  /** Where the value goes in a BenchConfig: 'rounds', 'slo.ttftMs', 'server.maxSeqs', 'server.diffusion.threshold'. */
  readonly path: string;
  /** The `servebench run` flag, without dashes; also its YAML flag-style key and, when sweepable, its --vary key. */
  readonly flag: string;
  readonly type: FieldType;
  /** Placeholder of the flag's value in the help. */
  readonly metavar?: string;
  /** One line for the help and the form's tooltip. */
  readonly help: string;
  readonly unit?: string;
  /** The app's label. */
  readonly label: string;
  readonly group: FieldGroup;
  /** Engines that use it (server fields only). */
  readonly engines?: readonly EngineKind[];
  /** `--vary KEY=...` can sweep it (the server restarts per value). */
  readonly sweep?: boolean;
  readonly ui: UiControl;
  /** Smallest allowed value of an int (default 1) or number (default: above 0). */
  readonly min?: number;
  /** Largest allowed value, when no LIMITS entry gives it. */
  readonly max?: number;
  /** The shared bound (src/shared/config.ts LIMITS). */
  readonly limit?: keyof typeof LIMITS;
  /** switch: the value its flag sets (default true). */
  readonly sets?: boolean;
  /** A second flag that turns the field off: false for a switch, 0 for an int. */
  readonly off?: string;
  readonly choices?: readonly string[];
  /** The app's placeholder when empty. */
  readonly placeholder?: string;
  /** The app's form starts with the schema default filled in (else empty, meaning the default). */
  readonly prefill?: boolean;
}

const HF: readonly EngineKind[] = ['vllm', 'sglang'];
const LAUNCH: readonly EngineKind[] = LAUNCHABLE_ENGINES;

/** The table: server fields first, then the load, cost, telemetry and output fields, in help and form order. */
export const FIELDS = [
  // ---- server ----
  {
    name: 'engine',
    path: 'server.engine',
    flag: 'engine',
    type: 'engine',
    metavar: LAUNCHABLE_ENGINES.join('|'),
    help: 'engine to launch (default sim: the built-in simulator)',
    label: 'Engine',
    group: 'server',
    ui: 'engine',
  },
  {
    name: 'url',
    path: 'server.url',
    flag: 'url',
    type: 'url',
    metavar: 'URL',
    help: 'benchmark a server that is already running (no launch); without it servebench launches --engine',
    label: 'Server URL',
    group: 'server',
    engines: ['attach'],
    ui: 'text',
    placeholder: 'http://127.0.0.1:8000',
  },
  {
    name: 'model',
    path: 'server.model',
    flag: 'model',
    type: 'text',
    metavar: 'M',
    help: 'hub id (org/name), local folder, or .gguf file (llama.cpp)',
    label: 'Model',
    group: 'server',
    engines: [...LAUNCH, 'attach'],
    ui: 'text',
  },
  {
    name: 'servedModelName',
    advanced: true,
    path: 'server.servedModelName',
    flag: 'served-model-name',
    type: 'text',
    metavar: 'NAME',
    help: 'name the server answers to',
    label: 'Served model name',
    group: 'server',
    engines: [...LAUNCH, 'attach'],
    ui: 'text',
    placeholder: 'the model',
  },
  {
    name: 'python',
    path: 'server.python',
    flag: 'python',
    type: 'text',
    metavar: 'PATH',
    help: 'interpreter of the venv/conda env with the engine',
    label: 'Python',
    group: 'server',
    engines: HF,
    ui: 'text',
  },
  {
    name: 'quantization',
    path: 'server.quantization',
    flag: 'quantization',
    type: 'text',
    metavar: 'Q',
    help: "checked against the installed engine's own --help",
    label: 'Quantization',
    group: 'server',
    engines: HF,
    sweep: true,
    ui: 'select',
    placeholder: 'none',
  },
  {
    name: 'dtype',
    path: 'server.dtype',
    flag: 'dtype',
    type: 'text',
    metavar: 'D',
    help: 'weights and activations dtype',
    label: 'dtype',
    group: 'server',
    engines: HF,
    sweep: true,
    ui: 'select',
    placeholder: 'auto',
  },
  {
    name: 'kvCacheDtype',
    path: 'server.kvCacheDtype',
    flag: 'kv-cache-dtype',
    type: 'text',
    metavar: 'D',
    help: 'KV-cache dtype (llama.cpp: -ctk and -ctv)',
    label: 'KV-cache dtype',
    group: 'server',
    engines: [...HF, 'llamacpp'],
    sweep: true,
    ui: 'select',
    placeholder: 'engine default',
  },
  {
    name: 'tensorParallel',
    path: 'server.tensorParallel',
    flag: 'tp',
    type: 'int',
    metavar: 'N',
    help: 'tensor parallel size',
    unit: 'GPUs',
    label: 'Tensor parallel',
    group: 'server',
    engines: HF,
    sweep: true,
    ui: 'number',
    placeholder: '1',
  },
  {
    name: 'maxModelLen',
    path: 'server.maxModelLen',
    flag: 'max-model-len',
    type: 'int',
    metavar: 'L',
    help: 'max tokens per request (SGLang --context-length)',
    unit: 'tokens',
    label: 'Max model length',
    group: 'server',
    engines: ['sim', ...HF],
    sweep: true,
    ui: 'number',
    placeholder: 'from the model',
  },
  {
    name: 'gpuMemoryFraction',
    path: 'server.gpuMemoryFraction',
    flag: 'gpu-memory',
    type: 'fraction',
    metavar: 'F',
    help: 'GPU memory fraction 0-1 (vLLM --gpu-memory-utilization, SGLang --mem-fraction-static)',
    label: 'GPU memory fraction',
    group: 'server',
    engines: HF,
    sweep: true,
    ui: 'number',
    placeholder: 'engine default',
  },
  {
    name: 'maxSeqs',
    path: 'server.maxSeqs',
    flag: 'max-seqs',
    type: 'int',
    metavar: 'N',
    help: 'max concurrent sequences (vLLM --max-num-seqs, SGLang --max-running-requests, llama.cpp -np slots)',
    label: 'Max seqs',
    group: 'server',
    engines: ['sim', ...HF, 'llamacpp'],
    sweep: true,
    ui: 'number',
    placeholder: 'engine default',
  },
  {
    name: 'prefixCaching',
    advanced: true,
    path: 'server.prefixCaching',
    flag: 'prefix-caching',
    off: 'no-prefix-caching',
    type: 'switch',
    help: "turn the engine's prefix cache on or off (default: the engine's)",
    label: 'Prefix caching',
    group: 'server',
    engines: ['sim', ...HF],
    ui: 'toggle',
  },
  {
    name: 'seed',
    advanced: true,
    path: 'server.seed',
    flag: 'seed',
    type: 'int',
    min: 0,
    metavar: 'N',
    help: "the engine's and the prompts' random seed",
    label: 'Seed',
    group: 'server',
    engines: ['sim', ...HF, 'llamacpp'],
    ui: 'number',
    placeholder: '0',
  },
  {
    name: 'startTimeout',
    advanced: true,
    path: 'server.startTimeoutMs',
    flag: 'start-timeout',
    type: 'duration',
    metavar: 'T',
    help: 'readiness time-out: seconds, or 90s / 20m / 1h',
    label: 'Start time-out',
    group: 'server',
    engines: LAUNCH,
    ui: 'text',
  },
  {
    name: 'host',
    path: 'server.host',
    flag: 'host',
    type: 'text',
    metavar: 'H',
    help: 'bind address',
    label: 'Host',
    group: 'server',
    engines: LAUNCH,
    ui: 'cli-only',
  },
  {
    name: 'port',
    path: 'server.port',
    flag: 'port',
    type: 'int',
    min: 0,
    max: 65535,
    metavar: 'P',
    help: 'port (default: a free one)',
    label: 'Port',
    group: 'server',
    engines: LAUNCH,
    ui: 'cli-only',
  },
  {
    name: 'extraArgs',
    path: 'server.extraArgs',
    flag: 'server-arg',
    type: 'args',
    metavar: 'ARG',
    help: 'extra engine argument, repeatable (--server-arg=--trust-remote-code)',
    label: 'Extra arguments',
    group: 'server',
    engines: LAUNCH,
    ui: 'args',
    placeholder: '--trust-remote-code --enforce-eager',
  },
  {
    name: 'env',
    path: 'server.env',
    flag: 'env',
    type: 'env',
    metavar: 'KEY=VALUE',
    help: 'environment for the server, repeatable (secrets never reach logs)',
    label: 'Environment',
    group: 'server',
    engines: LAUNCH,
    ui: 'env',
  },
  {
    name: 'blockSize',
    path: 'server.diffusion.blockSize',
    flag: 'block-size',
    type: 'int',
    metavar: 'B',
    help: 'diffusion (block) decoding: tokens per block',
    unit: 'tokens',
    label: 'Block size',
    group: 'diffusion',
    engines: ['sim', ...HF],
    sweep: true,
    ui: 'number',
    prefill: true,
  },
  {
    name: 'threshold',
    path: 'server.diffusion.threshold',
    flag: 'threshold',
    type: 'fraction',
    metavar: 'T',
    help: 'diffusion decoding: confidence a token needs to be accepted',
    label: 'Threshold',
    group: 'diffusion',
    engines: ['sim', ...HF],
    sweep: true,
    ui: 'number',
    prefill: true,
  },
  {
    name: 'dllmAlgorithm',
    advanced: true,
    path: 'server.diffusion.algorithm',
    flag: 'dllm-algorithm',
    type: 'text',
    metavar: 'A',
    help: 'diffusion decoding algorithm',
    label: 'Algorithm',
    group: 'diffusion',
    engines: HF,
    ui: 'text',
  },
  {
    name: 'simProfile',
    path: 'server.simProfile',
    flag: 'sim-profile',
    type: 'text',
    metavar: 'NAME',
    help: 'simulator profile (resources/sim-profiles: h200-llama8b-bf16, rtx4080-llama8b-int4, h200-dllm-block, thermal-throttle-demo, power-capped, instant)',
    label: 'Simulator profile',
    group: 'server',
    engines: ['sim'],
    ui: 'text',
    placeholder: 'h200-llama8b-bf16',
  },
  // ---- llama.cpp ----
  {
    name: 'binary',
    path: 'server.llamaServer',
    flag: 'llama-server',
    type: 'text',
    metavar: 'PATH',
    help: 'the llama-server binary (default: llama-server on PATH)',
    label: 'llama-server',
    group: 'llamacpp',
    engines: ['llamacpp'],
    ui: 'text',
    placeholder: 'llama-server (on PATH)',
  },
  {
    name: 'gpuLayers',
    path: 'server.gpuLayers',
    flag: 'gpu-layers',
    type: 'int',
    min: 0,
    metavar: 'N',
    help: 'layers offloaded to the GPU (-ngl)',
    label: 'GPU layers (-ngl)',
    group: 'llamacpp',
    engines: ['llamacpp'],
    ui: 'number',
    placeholder: 'llama.cpp default',
  },
  {
    name: 'contextSize',
    path: 'server.contextSize',
    flag: 'ctx-size',
    type: 'int',
    metavar: 'N',
    help: 'total context (-c), shared by the --max-seqs slots',
    unit: 'tokens',
    label: 'Context (-c)',
    group: 'llamacpp',
    engines: ['llamacpp'],
    ui: 'number',
    placeholder: 'from the model',
  },
  {
    name: 'threads',
    advanced: true,
    path: 'server.threads',
    flag: 'threads',
    type: 'int',
    metavar: 'N',
    help: 'CPU threads (-t)',
    label: 'Threads (-t)',
    group: 'llamacpp',
    engines: ['llamacpp'],
    ui: 'number',
    placeholder: 'llama.cpp default',
  },
  {
    name: 'flashAttention',
    path: 'server.flashAttention',
    flag: 'flash-attn',
    type: 'choice',
    choices: FLASH_ATTENTION_MODES,
    metavar: FLASH_ATTENTION_MODES.join('|'),
    help: 'flash attention (-fa)',
    label: 'Flash attention',
    group: 'llamacpp',
    engines: ['llamacpp'],
    ui: 'select',
    placeholder: 'llama.cpp default',
  },
  {
    name: 'continuousBatching',
    advanced: true,
    path: 'server.continuousBatching',
    flag: 'cont-batching',
    off: 'no-cont-batching',
    type: 'switch',
    help: 'continuous batching (on by default in llama-server)',
    label: 'Continuous batching',
    group: 'llamacpp',
    engines: ['llamacpp'],
    ui: 'toggle',
  },
  // ---- any server command ----
  {
    name: 'command',
    path: 'server.command',
    flag: 'cmd',
    type: 'command',
    metavar: '"LINE"',
    help: 'its command line, split like a shell but never run by one; {port}, {host} and {model} are filled in',
    label: 'Command',
    group: 'command',
    engines: ['command'],
    ui: 'text',
    placeholder: 'text-generation-launcher --port {port} --model-id {model}',
  },
  {
    name: 'healthPath',
    path: 'server.healthPath',
    flag: 'health',
    type: 'text',
    metavar: 'PATH',
    help: 'readiness path answering 200 when ready (default /health)',
    label: 'Health path',
    group: 'command',
    engines: ['command'],
    ui: 'text',
    placeholder: '/health',
  },
  // ---- load ----
  {
    name: 'api',
    advanced: true,
    path: 'api',
    flag: 'api',
    type: 'choice',
    choices: ['chat', 'completions'],
    metavar: 'chat|completions',
    help: 'endpoint to load',
    label: 'Endpoint',
    group: 'load',
    ui: 'select',
  },
  {
    name: 'apiKey',
    path: 'apiKey',
    flag: 'api-key',
    type: 'text',
    metavar: 'KEY',
    help: 'bearer token (or env SERVEBENCH_API_KEY / OPENAI_API_KEY); never written to disk',
    label: 'API key',
    group: 'load',
    ui: 'cli-only',
  },
  {
    name: 'concurrency',
    path: 'concurrency',
    flag: 'concurrency',
    type: 'int-list',
    limit: 'concurrency',
    metavar: '1,2,4,8,16',
    help: 'closed-loop levels: exactly C requests in flight',
    unit: 'requests',
    label: 'Concurrency',
    group: 'load',
    ui: 'list',
    prefill: true,
  },
  {
    name: 'rate',
    advanced: true,
    path: 'rate',
    flag: 'rate',
    type: 'number-list',
    limit: 'rate',
    metavar: '2,4,8',
    help: 'open-loop levels instead: Poisson arrivals; --max-concurrency caps in-flight',
    unit: 'req/s',
    label: 'Rate (req/s)',
    group: 'load',
    ui: 'list',
    placeholder: 'closed loop',
  },
  {
    name: 'maxConcurrency',
    advanced: true,
    path: 'maxConcurrency',
    flag: 'max-concurrency',
    type: 'int',
    limit: 'concurrency',
    metavar: 'N',
    help: 'open loop only: cap on requests in flight',
    label: 'Max in flight',
    group: 'load',
    ui: 'number',
    placeholder: 'no cap',
  },
  {
    name: 'inputLen',
    path: 'inputLen',
    flag: 'input-len',
    type: 'int-list',
    limit: 'tokens',
    metavar: '512[,2048]',
    help: "prompt tokens, exact: calibrated with the server's tokenizer",
    unit: 'tokens',
    label: 'Input tokens',
    group: 'load',
    ui: 'list',
    prefill: true,
  },
  {
    name: 'outputLen',
    path: 'outputLen',
    flag: 'output-len',
    type: 'int-list',
    limit: 'tokens',
    metavar: '256[,1024]',
    help: 'output tokens, forced with max_tokens = min_tokens and ignore_eos',
    unit: 'tokens',
    label: 'Output tokens',
    group: 'load',
    ui: 'list',
    prefill: true,
  },
  {
    name: 'rounds',
    path: 'rounds',
    flag: 'rounds',
    type: 'int',
    limit: 'rounds',
    metavar: 'N',
    help: 'rounds per level; a spread over 15 % between them fails a check',
    label: 'Rounds',
    group: 'load',
    ui: 'number',
    prefill: true,
  },
  {
    name: 'requestsPerRound',
    path: 'requestsPerRound',
    flag: 'requests-per-round',
    type: 'int',
    limit: 'requestsPerRound',
    metavar: 'N',
    help: 'default max(8, 4 x concurrency)',
    label: 'Requests / round',
    group: 'load',
    ui: 'number',
    placeholder: 'auto: max(8, 4×c)',
  },
  {
    name: 'warmup',
    path: 'warmup',
    flag: 'warmup',
    off: 'no-warmup',
    type: 'int',
    min: 0,
    limit: 'warmup',
    metavar: 'N',
    help: 'warm-up requests per level, discarded (default = concurrency)',
    label: 'Warm-up',
    group: 'load',
    ui: 'number',
    placeholder: 'auto: = c',
  },
  {
    name: 'timeout',
    advanced: true,
    path: 'timeoutMs',
    flag: 'timeout',
    type: 'seconds',
    limit: 'timeoutMs',
    metavar: 'S',
    help: 'per-request time-out in seconds',
    unit: 's',
    label: 'Request time-out (s)',
    group: 'load',
    ui: 'number',
  },
  {
    name: 'uniquePrefix',
    advanced: true,
    path: 'uniquePrefix',
    flag: 'no-unique-prefix',
    sets: false,
    type: 'switch',
    help: 'same prompt for all requests: measures the prefix-cached case',
    label: 'Unique prompt prefix',
    group: 'load',
    ui: 'toggle',
  },
  {
    name: 'ignoreEos',
    advanced: true,
    path: 'ignoreEos',
    flag: 'allow-eos',
    sets: false,
    type: 'switch',
    help: 'let the model stop early (no ignore_eos)',
    label: 'Ignore EOS',
    group: 'load',
    ui: 'toggle',
  },
  {
    name: 'temperature',
    advanced: true,
    path: 'temperature',
    flag: 'temperature',
    type: 'number',
    min: 0,
    metavar: 'T',
    help: 'sampling temperature',
    label: 'Temperature',
    group: 'load',
    ui: 'number',
  },
  {
    name: 'sloTtftMs',
    advanced: true,
    path: 'slo.ttftMs',
    flag: 'slo-ttft-ms',
    type: 'number',
    metavar: 'MS',
    help: 'service-level objective on time to first token: goodput = share meeting all',
    unit: 'ms',
    label: 'SLO TTFT (ms)',
    group: 'load',
    ui: 'number',
    placeholder: 'none',
  },
  {
    name: 'sloTpotMs',
    advanced: true,
    path: 'slo.tpotMs',
    flag: 'slo-tpot-ms',
    type: 'number',
    metavar: 'MS',
    help: 'service-level objective on time per output token',
    unit: 'ms',
    label: 'SLO TPOT (ms)',
    group: 'load',
    ui: 'number',
    placeholder: 'none',
  },
  {
    name: 'sloE2eMs',
    advanced: true,
    path: 'slo.e2eMs',
    flag: 'slo-e2e-ms',
    type: 'number',
    metavar: 'MS',
    help: 'service-level objective on end-to-end latency',
    unit: 'ms',
    label: 'SLO E2E (ms)',
    group: 'load',
    ui: 'number',
    placeholder: 'none',
  },
  {
    name: 'clientWorkers',
    path: 'clientWorkers',
    flag: 'client-workers',
    type: 'int',
    min: 0,
    limit: 'clientWorkers',
    metavar: 'N',
    help: 'load-generator worker threads (default: 0; cores/4, at most 4, when a level reaches 128 concurrent requests on a machine with 8 or more cores)',
    label: 'Client workers',
    group: 'load',
    ui: 'cli-only',
  },
  // ---- cost ----
  {
    name: 'gpuPricePerHour',
    path: 'gpuPricePerHour',
    flag: 'gpu-price-per-hour',
    type: 'number',
    metavar: 'USD',
    help: 'price of the GPU(s); gives cost per 1M output tokens',
    unit: 'USD/h',
    label: 'GPU price ($/hour)',
    group: 'cost',
    ui: 'number',
    placeholder: 'e.g. 2.00',
  },
  {
    name: 'utilizationPct',
    path: 'utilization',
    flag: 'utilization',
    type: 'fraction',
    metavar: 'U',
    help: 'average utilisation (0-1] to discount the peak cost by',
    label: 'Utilization (%)',
    group: 'cost',
    ui: 'percent',
    placeholder: 'e.g. 60',
  },
  // ---- telemetry ----
  {
    name: 'telemetryInterval',
    path: 'telemetryIntervalMs',
    flag: 'telemetry-interval',
    type: 'int',
    limit: 'telemetryIntervalMs',
    metavar: 'MS',
    help: 'nvidia-smi sampling interval',
    unit: 'ms',
    label: 'Telemetry interval (ms)',
    group: 'telemetry',
    ui: 'cli-only',
  },
  {
    name: 'nvidiaSmi',
    path: 'nvidiaSmi',
    flag: 'nvidia-smi',
    type: 'text',
    metavar: 'PATH',
    help: "nvidia-smi to use (or env SERVEBENCH_NVIDIA_SMI); wins over the simulator's fake GPU",
    label: 'nvidia-smi',
    group: 'telemetry',
    ui: 'cli-only',
  },
  {
    name: 'dcgmUrl',
    path: 'dcgmUrl',
    flag: 'dcgm-url',
    type: 'url',
    metavar: 'URL',
    help: 'DCGM exporter of a remote GPU (attach mode)',
    label: 'DCGM exporter',
    group: 'telemetry',
    ui: 'cli-only',
  },
  {
    name: 'coolDownTo',
    advanced: true,
    path: 'coolDownToC',
    flag: 'cool-down-to',
    type: 'number',
    metavar: 'C',
    help: 'before each level wait until the GPU is idle and at or below C degrees',
    unit: '°C',
    label: 'Cool down to (°C)',
    group: 'telemetry',
    ui: 'number',
    placeholder: 'no wait',
  },
  // ---- output ----
  {
    name: 'out',
    path: 'out',
    flag: 'out',
    type: 'text',
    metavar: 'DIR',
    help: 'parent folder of run folders',
    label: 'Output folder',
    group: 'output',
    ui: 'cli-only',
  },
  {
    name: 'label',
    path: 'label',
    flag: 'label',
    type: 'text',
    metavar: 'NAME',
    help: 'run label, part of the folder name',
    label: 'Label',
    group: 'output',
    ui: 'text',
    prefill: true,
  },
] as const satisfies readonly FieldDescriptor[];

/** A field of the table. */
export type Field = (typeof FIELDS)[number];
/** The app form's key of a field. */
export type FieldName = Field['name'];

const ALL: readonly FieldDescriptor[] = FIELDS;

/** Fields that configure the server (their path starts with `server.`). */
export const isServerField = (f: FieldDescriptor): boolean => f.path.startsWith('server.');

/** The field whose flag (or off flag) this is. */
export function fieldByFlag(flag: string): FieldDescriptor | undefined {
  return ALL.find((f) => f.flag === flag || f.off === flag);
}

/** The field with this form name. */
export function fieldByName(name: string): FieldDescriptor {
  const f = ALL.find((x) => x.name === name);
  if (!f) throw new Error(`no field named ${name}`);
  return f;
}

/** The fields `--vary` can sweep; their flags are the --vary keys. */
export const SWEEPABLE_FIELDS: readonly FieldDescriptor[] = ALL.filter((f) => f.sweep === true);

/** Whether a server field applies to an engine. */
export const fieldApplies = (f: FieldDescriptor, engine: EngineKind): boolean =>
  f.engines === undefined || f.engines.includes(engine);

/** The value at a dotted path ('server.diffusion.threshold'). */
export function getPath(obj: unknown, path: string): unknown {
  let cur = obj;
  for (const key of path.split('.')) {
    if (!cur || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[key];
  }
  return cur;
}

/** Sets the value at a dotted path, making the objects on the way (copies them, so a base is never changed). */
export function setPath(obj: Record<string, unknown>, path: string, value: unknown): void {
  const keys = path.split('.');
  let cur = obj;
  for (const key of keys.slice(0, -1)) {
    const next = cur[key];
    const copy = next && typeof next === 'object' && !Array.isArray(next) ? { ...(next as object) } : {};
    cur[key] = copy;
    cur = copy as Record<string, unknown>;
  }
  cur[keys[keys.length - 1] as string] = value;
}

// ---- values -------------------------------------------------------------------------------------

const INTEGER = /^\d+$/;
const DECIMAL = /^(\d+(\.\d*)?|\.\d+)$/;

/** The one number parser: digits (and a decimal point when allowed); 1e3, 0x10, Infinity, signs and `_` are NaN. */
export function plainNumber(text: string, integer: boolean): number {
  const t = text.trim();
  return (integer ? INTEGER : DECIMAL).test(t) ? Number(t) : Number.NaN;
}

/** A parsed value, or what is wrong with the text (to follow the flag or the field's label). */
export type Parsed = { ok: true; value: unknown } | { ok: false; error: string };

const fail = (error: string): Parsed => ({ ok: false, error });

function tooLarge(f: FieldDescriptor, n: number, text: string): Parsed | undefined {
  if (!f.limit) return undefined;
  const { max, why } = LIMITS[f.limit];
  if (f.type === 'seconds') {
    return n * 1000 > max ? fail(`${text} is too large: at most ${max / 1000} s (${why})`) : undefined;
  }
  return n > max ? fail(`${text} is too large: at most ${max.toLocaleString('en-US')} (${why})`) : undefined;
}

function or(words: readonly string[]): string {
  return words.length <= 1 ? (words[0] ?? '') : `${words.slice(0, -1).join(', ')} or ${words[words.length - 1]}`;
}

function isHttpUrl(text: string): boolean {
  try {
    const u = new URL(text);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}

/** Parses a duration: plain seconds, or a number with ms, s, m or h; undefined when it is none. */
export function durationMs(text: string): number | undefined {
  const m = text.trim().match(/^(\d+(?:\.\d+)?)\s*(ms|s|m|min|h)?$/i);
  if (!m) return undefined;
  const unit = (m[2] ?? 's').toLowerCase();
  const factor = unit === 'ms' ? 1 : unit === 's' ? 1_000 : unit === 'h' ? 3_600_000 : 60_000;
  return Math.round(Number(m[1]) * factor);
}

/**
 * A field's value from its text as typed after a flag, in a --vary list or as a YAML string: strict
 * numbers, the field's range and its shared bound. Types with their own syntax (engine, url, command,
 * args, env) and switches are read where they are used.
 */
export function parseFieldText(f: FieldDescriptor, raw: string): Parsed {
  const text = raw.trim();
  const got = `(got '${text}')`;
  switch (f.type) {
    case 'int': {
      const min = f.min ?? 1;
      const n = plainNumber(text, true);
      if (!Number.isSafeInteger(n) || n < min || (f.max !== undefined && n > f.max)) {
        const range =
          f.max !== undefined
            ? `an integer from ${min} to ${f.max}`
            : min === 0
              ? 'a non-negative integer'
              : 'a positive integer';
        return fail(`must be ${range} ${got}`);
      }
      return tooLarge(f, n, text) ?? { ok: true, value: n };
    }
    case 'number':
    case 'seconds': {
      const n = plainNumber(text, false);
      const zeroOk = f.min === 0;
      if (!Number.isFinite(n) || n < 0 || (!zeroOk && n === 0)) {
        return fail(`must be a ${zeroOk ? 'non-negative' : 'positive'} number ${got}`);
      }
      const big = tooLarge(f, n, text);
      if (big) return big;
      return { ok: true, value: f.type === 'seconds' ? Math.max(1, Math.round(n * 1000)) : n };
    }
    case 'fraction': {
      const n = plainNumber(text, false);
      if (!Number.isFinite(n) || n <= 0 || n > 1) return fail(`must be a number in (0, 1] ${got}`);
      return { ok: true, value: n };
    }
    case 'int-list':
    case 'number-list': {
      const integer = f.type === 'int-list';
      const parts = text
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s.length > 0);
      const nums = parts.map((p) => plainNumber(p, integer));
      if (
        parts.length === 0 ||
        nums.some((n) => !Number.isFinite(n) || n <= 0 || (integer && !Number.isSafeInteger(n)))
      ) {
        return fail(
          `must be a comma-separated list of positive ${integer ? 'integers' : 'numbers'} written plainly ${got}`,
        );
      }
      for (const [i, n] of nums.entries()) {
        const big = tooLarge(f, n, parts[i] as string);
        if (big) return big;
      }
      return { ok: true, value: nums };
    }
    case 'duration': {
      const ms = durationMs(text);
      if (ms === undefined) return fail(`must be a duration such as 600, 90s, 20m or 1h ${got}`);
      if (ms <= 0) return fail(`must be longer than zero ${got}`);
      return { ok: true, value: ms };
    }
    case 'url':
      return isHttpUrl(text)
        ? { ok: true, value: text }
        : fail(`must be an http(s) URL such as http://127.0.0.1:8000 ${got}`);
    case 'choice':
      return f.choices?.includes(text) ? { ok: true, value: text } : fail(`must be ${or(f.choices ?? [])} ${got}`);
    default:
      return text === '' ? fail('needs a value') : { ok: true, value: text };
  }
}

// ---- server sweeps --------------------------------------------------------------------------------

/** One `--vary KEY=V1,V2`: the key (a sweepable field's flag) and its values as typed. */
export interface VarySpec {
  key: string;
  values: string[];
}

/** Server variants as the cartesian product of the sweeps, each value read like its flag; or what is wrong. */
export function expandVary(
  specs: readonly VarySpec[],
): { ok: true; variants: Array<Record<string, unknown>> } | { ok: false; error: string } {
  let variants: Array<Record<string, unknown>> = [{}];
  for (const spec of specs) {
    const f = SWEEPABLE_FIELDS.find((x) => x.flag === spec.key);
    if (!f) return { ok: false, error: `KEY must be one of ${SWEEPABLE_FIELDS.map((x) => x.flag).join(', ')}` };
    const values = spec.values.map((v) => v.trim()).filter(Boolean);
    if (values.length === 0) return { ok: false, error: `${spec.key}= needs at least one value` };
    const parsed: unknown[] = [];
    for (const v of values) {
      const p = parseFieldText(f, v);
      if (!p.ok) return { ok: false, error: `${spec.key} ${p.error}` };
      parsed.push(p.value);
    }
    const local = f.path.slice('server.'.length);
    variants = variants.flatMap((base) =>
      parsed.map((value) => {
        const next = { ...base };
        setPath(next, local, value);
        return next;
      }),
    );
  }
  return { ok: true, variants };
}

/** A server variant in words, e.g. `tp=2 · gpu-memory=0.8` (the app's and the CLI's label of a setup). */
export function describeVariant(variant: Record<string, unknown>): string {
  return SWEEPABLE_FIELDS.filter((f) => getPath(variant, f.path.slice('server.'.length)) !== undefined)
    .map((f) => `${f.flag}=${String(getPath(variant, f.path.slice('server.'.length)))}`)
    .join(' · ');
}

// ---- defaults ------------------------------------------------------------------------------------

// The schema's defaults (diffusion's too, though a server has none until asked), so help and form never restate them.
const DEFAULTS: Record<string, unknown> = BenchConfigSchema.parse({});
setPath(DEFAULTS, 'server.diffusion', DiffusionConfigSchema.parse({}));

/** A field's default from the schema, or undefined when it has none (or only an empty one). */
export function fieldDefault(f: FieldDescriptor): unknown {
  const v = getPath(DEFAULTS, f.path);
  if (Array.isArray(v) && v.length === 0) return undefined;
  if (v && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 0) return undefined;
  return v;
}

const quoteWord = (w: string): string => (/[\s"'\\]/.test(w) ? `'${w.replace(/'/g, `'\\''`)}'` : w);

/** A config value written the way its flag (and the app's field) takes it. */
export function fieldText(f: FieldDescriptor, v: unknown): string {
  if (v === undefined || v === null) return '';
  if (f.type === 'args' || f.type === 'command') return (v as string[]).map(quoteWord).join(' ');
  if (Array.isArray(v)) return v.join(',');
  if (typeof v === 'boolean') return v ? 'on' : 'off';
  if (f.ui === 'percent') return String(Math.round((v as number) * 10_000) / 100);
  if (f.type === 'seconds') return String((v as number) / 1000);
  if (f.type === 'duration') {
    const ms = v as number;
    return ms % 60_000 === 0 ? `${ms / 60_000}m` : `${ms / 1000}s`;
  }
  return String(v);
}
