import { join } from 'node:path';
import { describeEngine } from '../../../shared/engines.js';
import { HF_MODEL_FAILURES, KV_CACHE_TOO_SMALL, noModuleFailure, num, push, requireModel } from './common.js';
import type { EngineMetricNames, EngineModule, LaunchPlan, ProgressPattern } from './types.js';

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
export const SGLANG_METRICS: EngineMetricNames = {
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
};

const PIP = 'pip install "sglang[all]"';

/** SGLang: `python -m sglang.launch_server --model-path M ... --enable-metrics`. */
export const sglangEngine: EngineModule = {
  kind: 'sglang',
  description: describeEngine('sglang'),
  probe: { type: 'python', pkg: 'sglang', helpModule: 'sglang.launch_server' },
  healthPath: '/health',
  readyLine: /The server is fired up and ready to roll!/,
  progress: SGLANG_PROGRESS,
  metricsPath: '/metrics',
  metricNames: SGLANG_METRICS,
  memoryHint: '--gpu-memory (SGLang --mem-fraction-static)',
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
  plan(config, ctx) {
    const model = requireModel(config);
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
