import { z } from 'zod';
import { ENGINE_SETTINGS as E, LAUNCH_SETTINGS, PYTHON } from '../../../shared/server-settings.js';
import { setting } from '../../../shared/setting.js';
import { HF_MODEL_FAILURES, noModuleFailure, num } from './common.js';
import { defineEngine, flag, used, usedAll } from './define.js';
import type { EngineMetricNames, ProgressPattern } from './types.js';

// Facts from TensorRT-LLM's own source: tensorrt_llm/commands/serve.py (the click options, launch_server binds the
// socket then loads the model), tensorrt_llm/serve/openai_server.py (/health 200 or 503, /version, /v1/models; /metrics
// is iteration stats as JSON, Prometheus is /prometheus/metrics when return_perf_metrics is on),
// tensorrt_llm/metrics/collector.py (trtllm_* names), llmapi/llm_args.py (KvCacheConfig, enable_iter_perf_stats),
// cpp/.../kvCacheManager.cpp (the KV cache line).

const PIP = 'pip install tensorrt_llm';
const MODULE = 'tensorrt_llm.commands.serve';

/** TensorRT-LLM's start-up milestones. */
const TRTLLM_PROGRESS: ProgressPattern[] = [
  {
    // "[TensorRT-LLM][INFO] [MemUsageChange] Allocated 26.91 GiB for max tokens in paged KV cache (220480)."
    key: 'kv-cache',
    pattern: /Allocated ([\d.]+) GiB for max tokens in paged KV cache \((\d+)\)/,
    message: (m) => `KV cache: ${m[2]} tokens (${m[1]} GiB)`,
    value: (m) => num(m[2]),
  },
  {
    // "[TRT-LLM] [I] max_seq_len=131072, max_num_requests=2048, max_num_tokens=8192, max_batch_size=64"
    key: 'max-running-requests',
    pattern: /max_seq_len=\d+, max_num_requests=(\d+)/,
    message: (m) => `max running requests: ${m[1]}`,
    value: (m) => num(m[1]),
  },
  { key: 'http', pattern: /Uvicorn running on (\S+)/, message: () => 'HTTP server up, waiting for /health' },
];

/** TensorRT-LLM's Prometheus names (MetricsCollector's prefix trtllm_; iteration gauges need enable_iter_perf_stats). */
const TRTLLM_METRICS: EngineMetricNames = {
  running: ['trtllm_num_requests_running'],
  waiting: ['trtllm_num_requests_waiting'],
  kvUsage: ['trtllm_kv_cache_utilization'],
  prefixCacheHitsTotal: ['trtllm_prompt_cached_tokens_total'],
  prefixCacheQueriesTotal: ['trtllm_prompt_tokens_total'],
  generationTokensTotal: ['trtllm_generation_tokens_total'],
};

/** trtllm-serve's own settings. */
const TRTLLM = {
  maxNumTokens: setting(z.number().int().positive().optional(), {
    label: 'Max tokens per batch',
    metavar: 'N',
    help: 'tokens one scheduled batch holds after padding is removed (TensorRT-LLM default 8192)',
    unit: 'tokens',
    group: 'server',
    sweep: true,
    advanced: true,
    placeholder: '8192',
  }),
  trtllmBackend: setting(z.enum(['pytorch', 'tensorrt', '_autodeploy']).optional(), {
    label: 'Backend',
    help: 'the TensorRT-LLM backend that serves the model',
    group: 'server',
    placeholder: 'pytorch',
  }),
};

/** A YAML scalar: numbers and booleans as they are, strings quoted (JSON strings are YAML strings). */
const yamlValue = (v: unknown): string => (typeof v === 'string' ? JSON.stringify(v) : String(v));

/**
 * The llm-api options file servebench passes with --extra_llm_api_options: the Prometheus metrics on, and the
 * settings that live in kv_cache_config (one object: a flag for one of them would be replaced by the file's).
 */
function llmApiOptions(config: {
  dtype?: string;
  gpuMemoryFraction?: number;
  prefixCaching?: boolean;
  kvCacheDtype?: string;
}): string {
  const kv = Object.entries({
    free_gpu_memory_fraction: config.gpuMemoryFraction,
    enable_block_reuse: config.prefixCaching,
    dtype: config.kvCacheDtype,
  }).filter(([, v]) => v !== undefined);
  const lines = [
    '# written by servebench: Prometheus metrics at /prometheus/metrics, iteration stats for the running/waiting gauges',
    'return_perf_metrics: true',
    'enable_iter_perf_stats: true',
    ...(config.dtype !== undefined ? [`dtype: ${yamlValue(config.dtype)}`] : []),
    ...(kv.length > 0 ? ['kv_cache_config:', ...kv.map(([k, v]) => `  ${k}: ${yamlValue(v)}`)] : []),
  ];
  return `${lines.join('\n')}\n`;
}

const IN_FILE = 'in the --extra_llm_api_options file';

/** NVIDIA TensorRT-LLM's OpenAI server: `python -m tensorrt_llm.commands.serve serve MODEL ...` (trtllm-serve). */
export const trtllmEngine = defineEngine({
  kind: 'trtllm',
  contextFix: 'serve the model with a longer context (--max-model-len, its --max_seq_len)',
  description: {
    name: 'TensorRT-LLM',
    hint: 'servebench launches trtllm-serve (its PyTorch backend by default)',
    requiresModel: true,
    modelHint: 'a hub id like org/name, a local checkpoint folder or a TensorRT engine folder',
    install: PIP,
  },
  settings: {
    ...usedAll(LAUNCH_SETTINGS, 'the launch itself', ['servedModelName']),
    model: used(LAUNCH_SETTINGS.model, 'MODEL (positional)'),
    python: used(PYTHON, `PYTHON -m ${MODULE} serve`),
    trtllmBackend: flag(TRTLLM.trtllmBackend, '--backend'),
    tensorParallel: flag(E.tensorParallel, '--tp_size'),
    maxSeqs: flag(E.maxSeqs, '--max_batch_size'),
    maxModelLen: flag(E.maxModelLen, '--max_seq_len'),
    maxNumTokens: flag(TRTLLM.maxNumTokens, '--max_num_tokens'),
    dtype: used(E.dtype, `dtype ${IN_FILE}`, { suggest: ['auto', 'bfloat16', 'float16'] }),
    gpuMemoryFraction: used(E.gpuMemoryFraction, `kv_cache_config.free_gpu_memory_fraction ${IN_FILE}`),
    prefixCaching: used(E.prefixCaching, `kv_cache_config.enable_block_reuse ${IN_FILE}`),
    kvCacheDtype: used(E.kvCacheDtype, `kv_cache_config.dtype ${IN_FILE}`, { suggest: ['auto', 'fp8'] }),
  },
  instead: {
    quantization: 'TensorRT-LLM reads the quantization from the checkpoint: serve a quantized checkpoint',
    servedModelName: 'it serves the model under its name (a folder: the folder name)',
  },
  probe: { type: 'python', pkg: 'tensorrt_llm' },
  probeSetting: 'python',
  healthPath: '/health',
  progress: TRTLLM_PROGRESS,
  metricsPath: '/prometheus/metrics',
  metricNames: TRTLLM_METRICS,
  memoryHint: '--gpu-memory (TensorRT-LLM kv_cache_config.free_gpu_memory_fraction)',
  spawnFix: 'pass --python PATH to a working Python interpreter',
  failures: [
    {
      kind: 'port-in-use',
      pattern: /Failed to bind socket to (\S+?):(\d+)/,
      message: (m) => `port ${m[2]} on ${m[1]} is already in use`,
      fix: () => 'choose another --port (or omit it to pick a free one), or stop the process that holds it',
    },
    {
      kind: 'cuda-mismatch',
      pattern: /No GPU devices found on the node/,
      message: () => 'TensorRT-LLM found no GPU',
      fix: () => 'run it where an NVIDIA GPU is visible (check nvidia-smi and CUDA_VISIBLE_DEVICES in --env)',
    },
    ...HF_MODEL_FAILURES,
    noModuleFailure('tensorrt_llm', PIP),
  ],
  command(config, ctx, { model, file }) {
    const options = file('trtllm-llm-api-options.yaml', llmApiOptions(config));
    return {
      command: config.python,
      head: ['-m', MODULE, 'serve', model, '--host', ctx.host, '--port', String(ctx.port)],
      tail: ['--extra_llm_api_options', options],
    };
  },
});
