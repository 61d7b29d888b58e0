import {
  DiffusionConfigSchema,
  ENGINE_SETTINGS as E,
  LAUNCH_SETTINGS,
  LORA_SETTING,
  PYTHON,
} from '../../../shared/server-settings.js';
import { HF_MODEL_FAILURES, KV_CACHE_TOO_SMALL, launchedAdapters, noModuleFailure, num } from './common.js';
import { defineEngine, flag, mapped, toggle, used, usedAll } from './define.js';
import type { EngineMetricNames, ProgressPattern } from './types.js';
import { HF_TYPES } from './vllm.js';

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

/**
 * SGLang's Prometheus names (python/sglang/srt/metrics/collector.py): the counters, not the gauges of the same
 * facts (num_retracted_reqs and cache_hit_rate are current values, not totals).
 */
const SGLANG_METRICS: EngineMetricNames = {
  running: ['sglang:num_running_reqs'],
  waiting: ['sglang:num_queue_reqs'],
  kvUsage: ['sglang:token_usage'],
  preemptionsTotal: ['sglang:num_retracted_requests_total'],
  prefixCacheHitsTotal: [
    'sglang:cached_tokens_total',
    { name: 'sglang:realtime_tokens_total', labels: { mode: 'prefill_cache' } },
  ],
  // Every prompt token is looked up in the radix cache: cached_tokens / prompt_tokens is its hit rate.
  prefixCacheQueriesTotal: ['sglang:prompt_tokens_total'],
  generationTokensTotal: ['sglang:generation_tokens_total'],
  // SGLang has a queue-time and a TTFT histogram but no prefill-time one.
  requestQueueSecondsSum: ['sglang:queue_time_seconds_sum'],
  requestQueueCount: ['sglang:queue_time_seconds_count'],
  ttftSecondsSum: ['sglang:time_to_first_token_seconds_sum'],
  ttftCount: ['sglang:time_to_first_token_seconds_count'],
};

const PIP = 'pip install "sglang[all]"';

/** SGLang: `python -m sglang.launch_server --model-path M ... --enable-metrics`. */
export const sglangEngine = defineEngine({
  kind: 'sglang',
  description: {
    name: 'SGLang',
    hint: 'servebench launches sglang.launch_server',
    requiresModel: true,
    modelHint: 'a hub id like org/name or a local folder',
    install: PIP,
  },
  settings: {
    ...usedAll(LAUNCH_SETTINGS, 'the launch itself'),
    model: used(LAUNCH_SETTINGS.model, '--model-path'),
    python: used(PYTHON, 'PYTHON -m sglang.launch_server'),
    servedModelName: flag(LAUNCH_SETTINGS.servedModelName, '--served-model-name'),
    tensorParallel: flag(E.tensorParallel, '--tp-size'),
    ...HF_TYPES,
    gpuMemoryFraction: flag(E.gpuMemoryFraction, '--mem-fraction-static'),
    maxModelLen: flag(E.maxModelLen, '--context-length'),
    maxSeqs: flag(E.maxSeqs, '--max-running-requests'),
    prefixCaching: toggle(E.prefixCaching, undefined, '--disable-radix-cache'),
    seed: flag(E.seed, '--random-seed'),
    // srt/server_args.py: --lora-paths nargs='*' of <PATH> | <NAME>=<PATH> (enable_lora follows); max_loras_per_batch
    // defaults to 8, so more adapters raise it: every adapter may run in one batch.
    lora: mapped(LORA_SETTING, '--lora-paths NAME=PATH ... [--max-loras-per-batch N past 8]', (text, ctx) => {
      const adapters = launchedAdapters(text, 'SGLang');
      const perBatch = adapters.length > 8 ? ['--max-loras-per-batch', String(adapters.length)] : [];
      if (perBatch.length > 0)
        ctx.message(`SGLang serves the ${adapters.length} LoRA adapters with --max-loras-per-batch ${adapters.length}`);
      return ['--lora-paths', ...adapters.map((a) => `${a.name}=${a.path}`), ...perBatch];
    }),
    diffusion: mapped(
      DiffusionConfigSchema.optional(),
      '--dllm-algorithm A --dllm-algorithm-config RUN/dllm-algorithm-config.yaml (block_size:, threshold:)',
      (d, ctx) => {
        const file = ctx.file('dllm-algorithm-config.yaml', `block_size: ${d.blockSize}\nthreshold: ${d.threshold}\n`);
        return ['--dllm-algorithm', d.algorithm, '--dllm-algorithm-config', file];
      },
    ),
  },
  probe: { type: 'python', pkg: 'sglang', helpModule: 'sglang.launch_server' },
  probeSetting: 'python',
  healthPath: '/health',
  readyLine: /The server is fired up and ready to roll!/,
  progress: SGLANG_PROGRESS,
  metricsPath: '/metrics',
  metricNames: SGLANG_METRICS,
  memoryHint: '--gpu-memory (SGLang --mem-fraction-static)',
  // srt/entrypoints/http_server.py: /flush_cache (GET, POST) answers 200, or 400 while requests run or wait.
  cacheReset: {
    path: '/flush_cache',
    notServed: 'this SGLang serves no /flush_cache: upgrade SGLang, or pass --no-cache-reset',
  },
  contextFix:
    'serve the model with a longer context (SGLang --context-length; --max-model-len when servebench launches it)',
  runningLimit: (n) => `it runs at most ${n} requests at once (max_running_requests)`,
  spawnFix: 'pass --python PATH to a working Python interpreter',
  failures: [
    ...KV_CACHE_TOO_SMALL,
    {
      kind: 'oom',
      pattern: /Not enough memory\. Please try to increase --mem-fraction-static/,
      message: () => 'not enough GPU memory for the KV cache (SGLang)',
      fix: () =>
        'raise --gpu-memory (SGLang --mem-fraction-static), quantize, or use a smaller model or more GPUs (--tp)',
    },
    ...HF_MODEL_FAILURES,
    noModuleFailure('sglang', PIP),
  ],
  command(config, ctx, { model, message }) {
    let maxSeqs = config.maxSeqs;
    // Without max-running-requests SGLang serves a diffusion model one request at a time: a sweep would measure that.
    if (config.diffusion && maxSeqs === undefined) {
      if (ctx.maxConcurrency !== undefined) {
        maxSeqs = ctx.maxConcurrency;
        message(
          `SGLang serves a diffusion model one request at a time unless told otherwise: set --max-running-requests ${maxSeqs} (the sweep's largest concurrency); pass --max-seqs to choose another value`,
        );
      } else {
        message(
          'SGLang serves a diffusion model one request at a time without --max-running-requests: pass --max-seqs N to serve N at once',
        );
      }
    }
    return {
      command: config.python,
      head: ['-m', 'sglang.launch_server', '--model-path', model, '--host', ctx.host, '--port', String(ctx.port)],
      tail: ['--enable-metrics'],
      model: config.servedModelName ?? model,
      config: { ...config, maxSeqs },
    };
  },
});
