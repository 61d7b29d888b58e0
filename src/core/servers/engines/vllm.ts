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

/** vLLM's Prometheus names (v1 first, then the V0 spellings). */
export const VLLM_METRICS: EngineMetricNames = {
  running: ['vllm:num_requests_running'],
  waiting: ['vllm:num_requests_waiting'],
  kvUsage: ['vllm:kv_cache_usage_perc', 'vllm:gpu_cache_usage_perc'],
  preemptionsTotal: ['vllm:num_preemptions_total', 'vllm:num_preemptions'],
  prefixCacheHitsTotal: ['vllm:prefix_cache_hits_total', 'vllm:gpu_prefix_cache_hits_total'],
  prefixCacheQueriesTotal: ['vllm:prefix_cache_queries_total', 'vllm:gpu_prefix_cache_queries_total'],
  generationTokensTotal: ['vllm:generation_tokens_total'],
  // decode_time = last_token_ts - first_token_ts per finished request (vllm/v1/metrics/stats.py).
  requestDecodeSecondsSum: ['vllm:request_decode_time_seconds_sum'],
  requestDecodeCount: ['vllm:request_decode_time_seconds_count'],
  // queue = scheduled - queued, prefill = first token - scheduled, observed per finished request (vllm/v1/metrics).
  requestQueueSecondsSum: ['vllm:request_queue_time_seconds_sum'],
  requestQueueCount: ['vllm:request_queue_time_seconds_count'],
  requestPrefillSecondsSum: ['vllm:request_prefill_time_seconds_sum'],
  requestPrefillCount: ['vllm:request_prefill_time_seconds_count'],
  ttftSecondsSum: ['vllm:time_to_first_token_seconds_sum'],
  ttftCount: ['vllm:time_to_first_token_seconds_count'],
};

const PIP = 'pip install vllm';

/**
 * dtype, quantization and KV-cache dtype as vLLM and SGLang take them: flags of the same names, with suggested
 * values (the installed engine's --help lists its quantizations, and has the last word).
 */
export const HF_TYPES = {
  dtype: flag(E.dtype, '--dtype', { suggest: ['auto', 'bfloat16', 'float16'] }),
  quantization: flag(E.quantization, '--quantization', { suggest: ['awq', 'gptq', 'fp8', 'bitsandbytes'] }),
  kvCacheDtype: flag(E.kvCacheDtype, '--kv-cache-dtype', { suggest: ['auto', 'fp8'] }),
};

/**
 * Diffusion flags as vLLM reads them: DiffusionConfig (vllm/config/diffusion.py, strict) has only canvas_length
 * (the block) and max_denoising_steps; the acceptance threshold is the model's generation-config key.
 */
function vllmDiffusionArgs(d: { blockSize: number; threshold: number }): string[] {
  return [
    '--diffusion-config',
    JSON.stringify({ canvas_length: d.blockSize }),
    '--override-generation-config',
    JSON.stringify({ confidence_threshold: d.threshold }),
  ];
}

/** vLLM's OpenAI-compatible server: `python -m vllm.entrypoints.openai.api_server --model M ...`. */
export const vllmEngine = defineEngine({
  kind: 'vllm',
  description: {
    name: 'vLLM',
    hint: 'servebench launches vllm serve',
    requiresModel: true,
    modelHint: 'a hub id like org/name or a local folder',
    install: PIP,
  },
  settings: {
    ...usedAll(LAUNCH_SETTINGS, 'the launch itself'),
    model: used(LAUNCH_SETTINGS.model, '--model'),
    python: used(PYTHON, 'PYTHON -m vllm.entrypoints.openai.api_server'),
    servedModelName: flag(LAUNCH_SETTINGS.servedModelName, '--served-model-name'),
    ...HF_TYPES,
    tensorParallel: flag(E.tensorParallel, '--tensor-parallel-size'),
    maxModelLen: flag(E.maxModelLen, '--max-model-len'),
    gpuMemoryFraction: flag(E.gpuMemoryFraction, '--gpu-memory-utilization'),
    maxSeqs: flag(E.maxSeqs, '--max-num-seqs'),
    prefixCaching: toggle(E.prefixCaching, '--enable-prefix-caching', '--no-enable-prefix-caching'),
    seed: flag(E.seed, '--seed'),
    // vllm/entrypoints/openai/cli_args.py: --lora-modules nargs='+' of name=path (LoRAParserAction); LoRAConfig's
    // max_loras defaults to 1 adapter per batch, so it is raised to the count: every adapter may run at once.
    lora: mapped(LORA_SETTING, '--enable-lora --max-loras N --lora-modules NAME=PATH ...', (text, ctx) => {
      const adapters = launchedAdapters(text, 'vLLM');
      ctx.message(
        `vLLM serves the ${adapters.length} LoRA adapters with --max-loras ${adapters.length}: all may share a batch`,
      );
      return [
        '--enable-lora',
        '--max-loras',
        String(adapters.length),
        '--lora-modules',
        ...adapters.map((a) => `${a.name}=${a.path}`),
      ];
    }),
    diffusion: mapped(
      DiffusionConfigSchema.optional(),
      '--diffusion-config \'{"canvas_length":B}\' --override-generation-config \'{"confidence_threshold":T}\'',
      (d, ctx) => {
        if (d.algorithm !== 'LowConfidence')
          ctx.message(
            `vLLM has no diffusion algorithm setting: --dllm-algorithm ${d.algorithm} applies to SGLang only; the model's own sampler is used`,
          );
        return vllmDiffusionArgs(d);
      },
    ),
  },
  probe: { type: 'python', pkg: 'vllm', helpModule: 'vllm.entrypoints.openai.api_server' },
  probeSetting: 'python',
  healthPath: '/health',
  progress: VLLM_PROGRESS,
  metricsPath: '/metrics',
  metricNames: VLLM_METRICS,
  memoryHint: '--gpu-memory (vLLM --gpu-memory-utilization)',
  // vllm/entrypoints/serve/dev/cache/api_router.py: POST /reset_prefix_cache, mounted only under VLLM_SERVER_DEV_MODE.
  cacheReset: {
    path: '/reset_prefix_cache',
    notServed:
      'vLLM serves POST /reset_prefix_cache only in its dev mode: start it with VLLM_SERVER_DEV_MODE=1 (--env VLLM_SERVER_DEV_MODE=1 when servebench launches it)',
  },
  contextFix: 'serve the model with a longer context (--max-model-len)',
  spawnFix: 'pass --python PATH to a working Python interpreter',
  failures: [
    ...KV_CACHE_TOO_SMALL,
    {
      kind: 'oom',
      pattern:
        /Free memory on device.*?\(([\d.]+)\/([\d.]+) GiB\) on startup is less than desired GPU memory utilization \(([\d.]+)/,
      message: (m) => `only ${m[1]} of ${m[2]} GiB GPU memory is free, less than the requested fraction ${m[3]}`,
      fix: () =>
        'free the GPU (another process holds memory: see nvidia-smi) or lower --gpu-memory (vLLM --gpu-memory-utilization)',
    },
    {
      kind: 'oom',
      pattern: /No available memory for the cache blocks/,
      message: () => 'no GPU memory is left for the KV cache after loading the weights',
      fix: () =>
        'raise --gpu-memory (vLLM --gpu-memory-utilization), quantize (--quantization), use a smaller model or more GPUs (--tp)',
    },
    ...HF_MODEL_FAILURES,
    noModuleFailure('vllm', PIP),
  ],
  helpRequires(config) {
    if (!config.diffusion) return [];
    return [
      { flag: '--diffusion-config', why: 'needed for a diffusion model' },
      { flag: '--override-generation-config', why: "sets the diffusion model's confidence_threshold" },
    ];
  },
  command(config, ctx, { model }) {
    return {
      command: config.python,
      head: [
        '-m',
        'vllm.entrypoints.openai.api_server',
        '--model',
        model,
        '--host',
        ctx.host,
        '--port',
        String(ctx.port),
      ],
      model: config.servedModelName ?? model,
    };
  },
});
