import { z } from 'zod';
import { DIFFUSION_SETTINGS, ENGINE_SETTINGS as E, LAUNCH_SETTINGS, PYTHON } from '../../../shared/server-settings.js';
import { setting } from '../../../shared/setting.js';
import { HF_MODEL_FAILURES, noModuleFailure } from './common.js';
import { defineEngine, flag, mapped, toggle, used, usedAll } from './define.js';
import type { EngineMetricNames, ProgressPattern } from './types.js';

// Facts from LMDeploy's own source: lmdeploy/cli/serve.py and cli/utils.py (`lmdeploy serve api_server` and its
// arguments), lmdeploy/serve/openai/api_server.py (the engine is built before uvicorn starts; the HINT line),
// serve/openai/endpoints/management.py (/health 200 once healthy, 503 before), metrics/loggers.py (lmdeploy:*
// names; metrics on unless --disable-metrics), pytorch/engine/executor/base.py (its out-of-memory lines).

const PIP = 'pip install lmdeploy';

/** LMDeploy's start-up milestones (its own logger prints at WARNING by default: the server's lines). */
const LMDEPLOY_PROGRESS: ProgressPattern[] = [
  { key: 'loading', pattern: /Building Model\./, message: () => 'building the model' },
  {
    // print(f'HINT:    Please open {http}://{server_name}:{server_port} in a browser for detailed api usage!!!')
    key: 'http',
    pattern: /HINT:\s+Please open \S*?(https?:\/\/[\w.:[\]-]+)/,
    message: () => 'engine built, starting the HTTP server',
  },
  { key: 'http', pattern: /Uvicorn running on (\S+)/, message: () => 'HTTP server up, waiting for /health' },
];

/** LMDeploy's Prometheus names (lmdeploy/metrics/loggers.py). */
const LMDEPLOY_METRICS: EngineMetricNames = {
  running: ['lmdeploy:num_requests_running'],
  waiting: ['lmdeploy:num_requests_waiting'],
  kvUsage: ['lmdeploy:gpu_cache_usage_perc'],
  prefixCacheHitsTotal: ['lmdeploy:cached_tokens_total'],
  prefixCacheQueriesTotal: ['lmdeploy:prompt_tokens_total'],
  generationTokensTotal: ['lmdeploy:generation_tokens_total'],
};

/** LMDeploy's own setting: which of its two engines serves. */
const LMDEPLOY_BACKEND = setting(z.enum(['turbomind', 'pytorch']).optional(), {
  label: 'Backend',
  help: "LMDeploy's inference engine (default: TurboMind where it supports the model)",
  group: 'server',
  placeholder: 'turbomind',
});

/** LMDeploy takes a block length and a confidence threshold (its unmasking strategies are not SGLang's algorithms). */
const DIFFUSION = z
  .object({ blockSize: DIFFUSION_SETTINGS.blockSize, threshold: DIFFUSION_SETTINGS.threshold })
  .optional();

/** LMDeploy's OpenAI server: `python -m lmdeploy serve api_server MODEL ...`. */
export const lmdeployEngine = defineEngine({
  kind: 'lmdeploy',
  contextFix: 'serve the model with a longer context (--max-model-len, its --session-len)',
  description: {
    name: 'LMDeploy',
    hint: 'servebench launches lmdeploy serve api_server (TurboMind or PyTorch engine)',
    requiresModel: true,
    modelHint: 'a hub id like org/name or a local folder',
    install: PIP,
  },
  settings: {
    ...usedAll(LAUNCH_SETTINGS, 'the launch itself'),
    model: used(LAUNCH_SETTINGS.model, 'MODEL_PATH (positional)'),
    python: used(PYTHON, 'PYTHON -m lmdeploy serve api_server'),
    lmdeployBackend: flag(LMDEPLOY_BACKEND, '--backend'),
    servedModelName: flag(LAUNCH_SETTINGS.servedModelName, '--model-name'),
    tensorParallel: flag(E.tensorParallel, '--tp'),
    dtype: flag(E.dtype, '--dtype', { suggest: ['auto', 'bfloat16', 'float16'] }),
    quantization: flag(E.quantization, '--model-format', {
      suggest: ['awq', 'gptq', 'fp8', 'compressed-tensors', 'mxfp4'],
    }),
    kvCacheDtype: flag(E.kvCacheDtype, '--quant-policy', { suggest: ['int4', 'int8', 'fp8', 'fp8_e5m2'] }),
    maxModelLen: flag(E.maxModelLen, '--session-len'),
    maxSeqs: flag(E.maxSeqs, '--max-batch-size'),
    gpuMemoryFraction: flag(E.gpuMemoryFraction, '--cache-max-entry-count'),
    prefixCaching: toggle(E.prefixCaching, '--enable-prefix-caching'),
    diffusion: mapped(DIFFUSION, '--dllm-block-length B --dllm-confidence-threshold T', (d) => [
      '--dllm-block-length',
      String(d.blockSize),
      '--dllm-confidence-threshold',
      String(d.threshold),
    ]),
  },
  instead: { seed: 'LMDeploy serves without a server seed; requests keep theirs' },
  probe: { type: 'python', pkg: 'lmdeploy' },
  probeSetting: 'python',
  healthPath: '/health',
  progress: LMDEPLOY_PROGRESS,
  metricsPath: '/metrics',
  metricNames: LMDEPLOY_METRICS,
  memoryHint: '--gpu-memory (LMDeploy --cache-max-entry-count)',
  spawnFix: 'pass --python PATH to a working Python interpreter',
  failures: [
    {
      kind: 'oom',
      pattern: /No enough gpu memory for kv cache/,
      message: () => 'no GPU memory is left for the KV cache after loading the weights (LMDeploy)',
      fix: () =>
        'raise --gpu-memory (LMDeploy --cache-max-entry-count), quantize (--quantization awq), use a smaller model or more GPUs (--tp)',
    },
    {
      kind: 'oom',
      pattern: /No enough gpu memory for runtime/,
      message: () => 'the KV cache left too little GPU memory for the runtime (LMDeploy)',
      fix: () => 'lower --gpu-memory (LMDeploy --cache-max-entry-count) or --max-seqs',
    },
    ...HF_MODEL_FAILURES,
    noModuleFailure('lmdeploy', PIP),
  ],
  command(config, ctx, { model, message }) {
    // A diffusion (dLLM) model runs on LMDeploy's PyTorch engine only.
    const backend = config.diffusion && config.lmdeployBackend === undefined ? 'pytorch' : config.lmdeployBackend;
    if (backend !== config.lmdeployBackend)
      message('LMDeploy serves a diffusion model with its PyTorch engine: servebench passes --backend pytorch');
    return {
      command: config.python,
      head: [
        '-m',
        'lmdeploy',
        'serve',
        'api_server',
        model,
        '--server-name',
        ctx.host,
        '--server-port',
        String(ctx.port),
      ],
      model: config.servedModelName ?? model,
      config: { ...config, lmdeployBackend: backend },
    };
  },
});
