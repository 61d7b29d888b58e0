import { join } from 'node:path';
import type { EngineKind, ServerConfig } from '../../shared/config.js';

/** Where and how one launch happens; everything an adapter needs beyond the config. */
export interface LaunchContext {
  /** Host to bind (config.host). */
  host: string;
  /** The port actually used (a free one when config.port is 0). */
  port: number;
  /** Run folder: generated config files go here. */
  runDir: string;
  /** Largest concurrency of the sweep. */
  maxConcurrency?: number;
  /** servebench's CLI script (sim only). */
  cliScript?: string;
  /** Node binary for the sim (default process.execPath). */
  nodePath?: string;
}

/** The exact command to run, never through a shell, plus files to write first and notes for the user. */
export interface LaunchPlan {
  command: string;
  args: string[];
  /** Files to write before launch (absolute paths). */
  files: Array<{ path: string; content: string }>;
  /** Things servebench decided for the user (e.g. SGLang max-running-requests for diffusion). */
  messages: string[];
  /** The model name requests must carry, when known before launch. */
  model?: string;
  /** Fake GPU state file (sim). */
  gpuStateFile?: string;
}

/** A start-up milestone recognised in the engine's log. */
export interface ProgressPattern {
  key: 'loading' | 'weights' | 'kv-cache' | 'max-concurrency' | 'graphs' | 'http' | 'max-running-requests';
  pattern: RegExp;
  message: (m: RegExpMatchArray) => string;
  value?: (m: RegExpMatchArray) => number | undefined;
  /** max-concurrency: the request size (tokens) the value holds for (vLLM's N, its max model length). */
  perRequestTokens?: (m: RegExpMatchArray) => number | undefined;
}

/** Prometheus metric names an engine exposes at /metrics (vLLM renamed some across versions: aliases follow). */
export interface EngineMetricNames {
  running: string[];
  waiting: string[];
  kvCacheUsage: string[];
  preemptions: string[];
  prefixCacheHits: string[];
  promptTokens: string[];
  generationTokens: string[];
  ttftSeconds: string[];
  itlSeconds: string[];
}

/** What servebench knows about one engine: argv, readiness, log patterns and metric names. */
export interface EngineAdapter {
  readonly kind: EngineKind;
  readonly displayName: string;
  /** Python module launched with `python -m` (vllm, sglang). */
  readonly module?: string;
  /** Python package imported for detection. */
  readonly packageName?: string;
  readonly healthPath: string;
  /** A log line that must also have been seen before the server counts as ready (SGLang). */
  readonly readyLine?: RegExp;
  readonly progress: ProgressPattern[];
  readonly metricsPath?: string;
  readonly metricNames?: EngineMetricNames;
  /** Builds the launch command. Pure: no I/O. */
  plan(config: ServerConfig, ctx: LaunchContext): LaunchPlan;
}

const num = (s: string | undefined): number | undefined => {
  if (s === undefined) return undefined;
  const n = Number(s.replace(/,/g, ''));
  return Number.isFinite(n) ? n : undefined;
};

const push = (args: string[], flag: string, value: string | number | undefined): void => {
  if (value !== undefined && value !== '') args.push(flag, String(value));
};

/** vLLM's start-up milestones (V0 and V1 wordings). */
export const VLLM_PROGRESS: ProgressPattern[] = [
  { key: 'loading', pattern: /Starting to load model (\S+)/, message: (m) => `loading ${m[1]}` },
  {
    key: 'weights',
    pattern:
      /(?:Loading weights took|Loading model weights took|Model loading took) ([\d.]+) ?(GiB|GB)(?: and ([\d.]+) seconds)?/,
    message: (m) => `weights loaded: ${m[1]} ${m[2]}${m[3] ? ` in ${m[3]} s` : ''}`,
    value: (m) => num(m[1]),
  },
  {
    key: 'kv-cache',
    pattern: /GPU KV cache size: ([\d,]+) tokens/,
    message: (m) => `KV cache: ${m[1]} tokens`,
    value: (m) => num(m[1]),
  },
  {
    key: 'max-concurrency',
    pattern: /Maximum concurrency for ([\d,]+) tokens per request: ([\d.]+)x/,
    message: (m) => `maximum concurrency at ${m[1]} tokens per request: ${m[2]}x`,
    value: (m) => num(m[2]),
    perRequestTokens: (m) => num(m[1]),
  },
  {
    key: 'graphs',
    pattern: /Capturing CUDA graphs?|Capturing cudagraphs|Graph capturing finished in ([\d.]+) secs?/i,
    message: (m) => (m[1] ? `CUDA graphs captured in ${m[1]} s` : 'capturing CUDA graphs'),
  },
  {
    key: 'http',
    pattern: /Uvicorn running on (\S+)|Starting vLLM API server/,
    message: () => 'HTTP server up, waiting for /health',
  },
];

/** SGLang's start-up milestones. */
export const SGLANG_PROGRESS: ProgressPattern[] = [
  { key: 'loading', pattern: /Load weight begin/, message: () => 'loading weights' },
  {
    key: 'weights',
    pattern: /Load weight end\..*?mem usage=([\d.]+) GB/,
    message: (m) => `weights loaded: ${m[1]} GB`,
    value: (m) => num(m[1]),
  },
  {
    key: 'kv-cache',
    pattern: /KV Cache is allocated\. #tokens: ([\d,]+)|max_total_num_tokens=([\d,]+)/,
    message: (m) => `KV cache: ${m[1] ?? m[2]} tokens`,
    value: (m) => num(m[1] ?? m[2]),
  },
  {
    key: 'max-running-requests',
    pattern: /max_running_requests=(\d+)/,
    message: (m) => `max running requests: ${m[1]}`,
    value: (m) => num(m[1]),
  },
  {
    key: 'graphs',
    pattern: /Capture cuda graph (begin|end)(?:\. Time elapsed: ([\d.]+) s)?/i,
    message: (m) => (m[1] === 'end' ? `CUDA graphs captured${m[2] ? ` in ${m[2]} s` : ''}` : 'capturing CUDA graphs'),
  },
  { key: 'http', pattern: /Uvicorn running on (\S+)/, message: () => 'HTTP server up, warming up' },
];

export const VLLM_METRICS: EngineMetricNames = {
  running: ['vllm:num_requests_running'],
  waiting: ['vllm:num_requests_waiting'],
  kvCacheUsage: ['vllm:kv_cache_usage_perc', 'vllm:gpu_cache_usage_perc'],
  preemptions: ['vllm:num_preemptions_total', 'vllm:num_preemptions'],
  prefixCacheHits: ['vllm:prefix_cache_hits_total', 'vllm:prefix_cache_hits'],
  promptTokens: ['vllm:prompt_tokens_total'],
  generationTokens: ['vllm:generation_tokens_total'],
  ttftSeconds: ['vllm:time_to_first_token_seconds'],
  itlSeconds: ['vllm:inter_token_latency_seconds', 'vllm:time_per_output_token_seconds'],
};

export const SGLANG_METRICS: EngineMetricNames = {
  running: ['sglang:num_running_reqs'],
  waiting: ['sglang:num_queue_reqs'],
  kvCacheUsage: ['sglang:token_usage'],
  preemptions: ['sglang:num_retracted_reqs'],
  prefixCacheHits: ['sglang:cache_hit_rate'],
  promptTokens: ['sglang:prompt_tokens_total'],
  generationTokens: ['sglang:generation_tokens_total'],
  ttftSeconds: ['sglang:time_to_first_token_seconds'],
  itlSeconds: ['sglang:inter_token_latency_seconds'],
};

function requireModel(config: ServerConfig, engine: string): string {
  if (!config.model) throw new Error(`${engine} needs a model (--model)`);
  return config.model;
}

/** vLLM's OpenAI-compatible server: `python -m vllm.entrypoints.openai.api_server --model M ...`. */
export const vllmAdapter: EngineAdapter = {
  kind: 'vllm',
  displayName: 'vLLM',
  module: 'vllm.entrypoints.openai.api_server',
  packageName: 'vllm',
  healthPath: '/health',
  progress: VLLM_PROGRESS,
  metricsPath: '/metrics',
  metricNames: VLLM_METRICS,
  plan(config, ctx) {
    const model = requireModel(config, 'vLLM');
    const args = [
      '-m',
      'vllm.entrypoints.openai.api_server',
      '--model',
      model,
      '--host',
      ctx.host,
      '--port',
      String(ctx.port),
    ];
    push(args, '--served-model-name', config.servedModelName);
    push(args, '--dtype', config.dtype);
    push(args, '--quantization', config.quantization);
    push(args, '--kv-cache-dtype', config.kvCacheDtype);
    push(args, '--tensor-parallel-size', config.tensorParallel);
    push(args, '--max-model-len', config.maxModelLen);
    push(args, '--gpu-memory-utilization', config.gpuMemoryFraction);
    push(args, '--max-num-seqs', config.maxSeqs);
    if (config.prefixCaching === true) args.push('--enable-prefix-caching');
    if (config.prefixCaching === false) args.push('--no-enable-prefix-caching');
    push(args, '--seed', config.seed);
    if (config.diffusion) {
      const d = config.diffusion;
      args.push(
        '--diffusion-config',
        JSON.stringify({ algorithm: d.algorithm, block_size: d.blockSize, threshold: d.threshold }),
      );
    }
    args.push(...config.extraArgs);
    return { command: config.python, args, files: [], messages: [], model: config.servedModelName ?? model };
  },
};

/** SGLang: `python -m sglang.launch_server --model-path M ... --enable-metrics`. */
export const sglangAdapter: EngineAdapter = {
  kind: 'sglang',
  displayName: 'SGLang',
  module: 'sglang.launch_server',
  packageName: 'sglang',
  healthPath: '/health',
  readyLine: /The server is fired up and ready to roll!/,
  progress: SGLANG_PROGRESS,
  metricsPath: '/metrics',
  metricNames: SGLANG_METRICS,
  plan(config, ctx) {
    const model = requireModel(config, 'SGLang');
    const args = ['-m', 'sglang.launch_server', '--model-path', model, '--host', ctx.host, '--port', String(ctx.port)];
    const files: LaunchPlan['files'] = [];
    const messages: string[] = [];
    push(args, '--served-model-name', config.servedModelName);
    push(args, '--tp-size', config.tensorParallel);
    push(args, '--quantization', config.quantization);
    push(args, '--dtype', config.dtype);
    push(args, '--kv-cache-dtype', config.kvCacheDtype);
    push(args, '--mem-fraction-static', config.gpuMemoryFraction);
    push(args, '--context-length', config.maxModelLen);
    let maxRunning = config.maxSeqs;
    if (config.diffusion && maxRunning === undefined) {
      if (ctx.maxConcurrency !== undefined) {
        maxRunning = ctx.maxConcurrency;
        messages.push(
          `SGLang serves a diffusion model one request at a time unless told otherwise: set --max-running-requests ${maxRunning} (the sweep's largest concurrency); pass --max-seqs to choose another value`,
        );
      } else {
        messages.push(
          'SGLang serves a diffusion model one request at a time without --max-running-requests: pass --max-seqs N to serve N at once',
        );
      }
    }
    push(args, '--max-running-requests', maxRunning);
    if (config.prefixCaching === false) args.push('--disable-radix-cache');
    push(args, '--random-seed', config.seed);
    args.push('--enable-metrics');
    if (config.diffusion) {
      const d = config.diffusion;
      const file = join(ctx.runDir, 'dllm-algorithm-config.yaml');
      files.push({ path: file, content: `block_size: ${d.blockSize}\nthreshold: ${d.threshold}\n` });
      args.push('--dllm-algorithm', d.algorithm, '--dllm-algorithm-config', file);
    }
    args.push(...config.extraArgs);
    return { command: config.python, args, files, messages, model: config.servedModelName ?? model };
  },
};

/** The built-in simulator as a child process: `node <servebench cli> sim --mimic vllm ...`. */
export const simAdapter: EngineAdapter = {
  kind: 'sim',
  displayName: 'the simulator',
  healthPath: '/health',
  progress: VLLM_PROGRESS,
  metricsPath: '/metrics',
  metricNames: VLLM_METRICS,
  plan(config, ctx) {
    if (!ctx.cliScript) throw new Error('the simulator needs the servebench CLI script');
    const gpuStateFile = join(ctx.runDir, 'gpu-state.json');
    const args = [ctx.cliScript, 'sim', '--mimic', 'vllm', '--port', String(ctx.port), '--host', ctx.host];
    push(args, '--model', config.servedModelName ?? config.model);
    push(args, '--profile', config.simProfile);
    args.push('--gpu-state', gpuStateFile);
    push(args, '--max-model-len', config.maxModelLen);
    push(args, '--max-num-seqs', config.maxSeqs);
    if (config.prefixCaching !== undefined) args.push('--prefix-caching', String(config.prefixCaching));
    push(args, '--seed', config.seed);
    if (config.diffusion)
      args.push('--block-size', String(config.diffusion.blockSize), '--threshold', String(config.diffusion.threshold));
    args.push(...config.simArgs);
    return {
      command: ctx.nodePath ?? process.execPath,
      args,
      files: [],
      messages: [],
      model: config.servedModelName ?? config.model,
      gpuStateFile,
    };
  },
};

/** A server someone else runs: nothing to launch. */
export const attachAdapter: EngineAdapter = {
  kind: 'attach',
  displayName: 'the server',
  healthPath: '/health',
  progress: [],
  plan() {
    throw new Error('attach launches nothing');
  },
};

const ADAPTERS: Record<EngineKind, EngineAdapter> = {
  vllm: vllmAdapter,
  sglang: sglangAdapter,
  sim: simAdapter,
  attach: attachAdapter,
};

/** The adapter of an engine kind. */
export function adapterFor(kind: EngineKind): EngineAdapter {
  return ADAPTERS[kind];
}

/** The full command line as one printable string (for logs and the run record; never executed). */
export function formatCommand(command: string, args: readonly string[]): string {
  const quote = (s: string): string => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);
  return [command, ...args].map(quote).join(' ');
}
