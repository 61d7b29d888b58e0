import { z } from 'zod';
import { ENGINE_SETTINGS as E, LAUNCH_SETTINGS, LORA_SETTING } from '../../../shared/server-settings.js';
import { setting } from '../../../shared/setting.js';
import { launchedAdapters, num } from './common.js';
import { defineEngine, flag, mapped, toggle, used, usedAll } from './define.js';
import type { EngineMetricNames, FailurePattern, ProgressPattern } from './types.js';

// Facts from llama.cpp's own source: tools/server/server.cpp (log lines, /health), server-context.cpp (metrics,
// slots), server-http.cpp (bind error), src/llama-kv-cache.cpp (KV size line), common/arg.cpp (--version).

/** llama-server's start-up milestones. */
export const LLAMACPP_PROGRESS: ProgressPattern[] = [
  { key: 'loading', pattern: /load_model: loading model '([^']+)'/, message: (m) => `loading ${m[1]}` },
  {
    key: 'weights',
    pattern: /load_tensors:\s+(\S+) model buffer size =\s+([\d.]+) MiB/,
    message: (m) => `weights loaded: ${m[2]} MiB on ${m[1]}`,
    value: (m) => {
      const mib = num(m[2]);
      return mib === undefined ? undefined : mib / 1024;
    },
  },
  {
    // "llama_kv_cache: size =  512.00 MiB (  4096 cells,  32 layers,  4/4 seqs), K (f16): ..." (one cell, one token)
    key: 'kv-cache',
    pattern: /llama_kv_cache\w*: +size = +[\d.]+ MiB \(\s*(\d+) cells/,
    message: (m) => `KV cache: ${m[1]} tokens`,
    value: (m) => num(m[1]),
  },
  {
    key: 'max-running-requests',
    pattern: /initializing slots, n_slots = (\d+)/,
    message: (m) => `parallel slots: ${m[1]}`,
    value: (m) => num(m[1]),
  },
  { key: 'http', pattern: /server is listening on (\S+)/, message: (m) => `listening on ${m[1]}` },
];

/** llama-server's /metrics (needs --metrics); kv_cache_usage_ratio exists in older builds only. */
const LLAMACPP_METRICS: EngineMetricNames = {
  running: ['llamacpp:requests_processing'],
  waiting: ['llamacpp:requests_deferred'],
  kvUsage: ['llamacpp:kv_cache_usage_ratio'],
  generationTokensTotal: ['llamacpp:tokens_predicted_total'],
};

/** A model argument names a local file (-m) rather than a Hugging Face repo (-hf). */

/** llama-server's fatal lines. */
const LLAMACPP_FAILURES: FailurePattern[] = [
  {
    kind: 'oom',
    pattern:
      /cudaMalloc failed: out of memory|unable to allocate (?:CUDA\d*|backend) buffer|failed to allocate (\w+) buffer of size (\d+)/,
    message: () => 'the GPU ran out of memory loading the model or its KV cache',
    fix: () =>
      'offload fewer layers (--gpu-layers), lower --ctx-size, quantize the KV cache (--kv-cache-dtype q8_0) or use a smaller quantization',
  },
  {
    kind: 'model-not-found',
    pattern: /failed to open GGUF file '([^']*)'/,
    message: (m) => `llama.cpp cannot open the model file '${m[1]}'`,
    fix: () => 'check --model: the path to a .gguf file, or a Hugging Face repo such as org/name-GGUF',
  },
  {
    kind: 'model-not-found',
    pattern: /error loading model: (.*)/,
    message: (m) => `llama.cpp could not load the model: ${m[1]}`,
    fix: () =>
      'check the .gguf file (complete download, an architecture this llama.cpp build knows: update llama.cpp if not)',
  },
  {
    kind: 'port-in-use',
    pattern: /couldn't bind HTTP server socket, hostname: (\S+), port: (\d+)/,
    message: (m) => `port ${m[2]} on ${m[1]} is already in use`,
    fix: () => 'choose another --port (or omit it to pick a free one), or stop the process that holds it',
  },
];

/** llama.cpp's -fa values (common/arg.cpp). */
const FLASH_ATTENTION_MODES = ['on', 'off', 'auto'] as const;
/** common/arg.cpp: kv_cache_types. */
const KV_CACHE_TYPES = ['f32', 'f16', 'bf16', 'q8_0', 'q4_0', 'q4_1', 'iq4_nl', 'q5_0', 'q5_1'];

/** llama-server's own settings. */
const LLAMA = {
  llamaServer: setting(z.string().min(1).default('llama-server'), {
    label: 'llama-server',
    metavar: 'PATH',
    help: 'the llama-server binary: a path, or a name looked up on PATH',
    group: 'server',
    trust: 'program',
    condition: false,
    engineBound: true,
  }),
  gpuLayers: setting(z.number().int().min(0).optional(), {
    label: 'GPU layers (-ngl)',
    metavar: 'N',
    help: 'layers offloaded to the GPU (-ngl)',
    group: 'server',
    placeholder: 'llama.cpp default',
  }),
  contextSize: setting(z.number().int().positive().optional(), {
    flag: 'ctx-size',
    label: 'Context (-c)',
    metavar: 'N',
    help: 'total context (-c), shared by the --max-seqs slots',
    unit: 'tokens',
    group: 'server',
    placeholder: 'from the model',
  }),
  threads: setting(z.number().int().positive().optional(), {
    label: 'Threads (-t)',
    metavar: 'N',
    help: 'CPU threads (-t)',
    group: 'server',
    advanced: true,
    placeholder: 'llama.cpp default',
  }),
  flashAttention: setting(z.enum(FLASH_ATTENTION_MODES).optional(), {
    flag: 'flash-attn',
    label: 'Flash attention',
    help: 'flash attention (-fa)',
    group: 'server',
    placeholder: 'llama.cpp default',
  }),
  continuousBatching: setting(z.boolean().optional(), {
    flag: 'cont-batching',
    off: 'no-cont-batching',
    label: 'Continuous batching',
    help: 'continuous batching (on by default in llama-server)',
    group: 'server',
    advanced: true,
  }),
};

/** A model argument names a local file (-m) rather than a Hugging Face repo (-hf). */
const isLocalModel = (model: string): boolean =>
  /\.gguf$/i.test(model) || model.startsWith('/') || model.startsWith('.') || model.startsWith('~');

/** Context each parallel slot gets (llama-server splits -c evenly over -np); undefined when -c is left to the model. */
function perSlotContext(config: { contextSize?: number; maxSeqs?: number }): number | undefined {
  if (config.contextSize === undefined) return undefined;
  return Math.floor(config.contextSize / (config.maxSeqs ?? 1));
}

/** llama.cpp's llama-server: one GGUF model, N parallel slots sharing one context. */
export const llamacppEngine = defineEngine({
  kind: 'llamacpp',
  description: {
    name: 'llama.cpp',
    hint: 'servebench launches llama-server with a .gguf model (or a Hugging Face repo for -hf)',
    requiresModel: true,
    modelHint: 'a .gguf file or a Hugging Face repo',
    install: 'build llama.cpp (`cmake --build build --target llama-server`) or `brew install llama.cpp`',
  },
  settings: {
    ...usedAll(LAUNCH_SETTINGS, 'the launch itself'),
    model: used(LAUNCH_SETTINGS.model, '-m FILE.gguf, or -hf org/repo'),
    llamaServer: used(LLAMA.llamaServer, 'the binary run'),
    servedModelName: flag(LAUNCH_SETTINGS.servedModelName, '--alias'),
    gpuLayers: flag(LLAMA.gpuLayers, '--n-gpu-layers'),
    contextSize: flag(LLAMA.contextSize, '--ctx-size'),
    maxSeqs: flag(E.maxSeqs, '--parallel'),
    continuousBatching: toggle(LLAMA.continuousBatching, '--cont-batching', '--no-cont-batching'),
    flashAttention: flag(LLAMA.flashAttention, '--flash-attn'),
    kvCacheDtype: mapped(
      E.kvCacheDtype,
      '--cache-type-k and --cache-type-v',
      (v) => ['--cache-type-k', v, '--cache-type-v', v],
      {
        suggest: KV_CACHE_TYPES,
      },
    ),
    threads: flag(LLAMA.threads, '--threads'),
    seed: flag(E.seed, '--seed'),
    // common/arg.cpp: --lora FNAME, repeatable, loaded in order (ids 0, 1, ...); --lora-init-without-apply loads
    // them at scale 0, so a request without `lora` is the base model and one with it applies only its own.
    lora: mapped(LORA_SETTING, '--lora PATH ... --lora-init-without-apply (requests pick by id)', (text) => [
      ...launchedAdapters(text, 'llama.cpp').flatMap((a) => ['--lora', a.path as string]),
      '--lora-init-without-apply',
    ]),
  },
  instead: {
    quantization: 'a GGUF file is quantized already: pick the file',
    tensorParallel: 'llama.cpp splits layers: --server-arg=--split-mode',
    gpuMemoryFraction: 'use --gpu-layers',
    maxModelLen: 'use --ctx-size: the context all slots share',
  },
  probe: {
    type: 'binary',
    versionArgs: ['--version'],
    // common/arg.cpp: fprintf(stderr, "version: %d (%s)\n", LLAMA_BUILD_NUMBER, LLAMA_COMMIT). Built from a tarball or
    // `git archive` (no git metadata), cmake/build-info.cmake leaves "0 (unknown)": still llama.cpp, version unknown.
    version: (out) => {
      const m = out.match(/version: (\d{1,9}) \(([\w.+-]{1,40})\)/);
      return m && m[1] !== '0' ? `b${m[1]} (${m[2]})` : 'unknown';
    },
  },
  probeSetting: 'llamaServer',
  healthPath: '/health',
  progress: LLAMACPP_PROGRESS,
  metricsPath: '/metrics',
  metricNames: LLAMACPP_METRICS,
  memoryHint: '--gpu-layers (llama.cpp -ngl) or --ctx-size',
  // server-context.cpp: each of the --parallel slots gets --ctx-size / n_parallel (n_ctx per slot in /props).
  contextFix:
    'give each llama.cpp slot more context: a larger --ctx-size (shared by its --parallel slots; --max-seqs when servebench launches it) or fewer slots',
  runningLimit: (n) => `llama-server has ${n} parallel slots (--parallel; --max-seqs when servebench launches it)`,
  spawnFix: 'install llama.cpp so llama-server is on PATH, or pass --llama-server PATH',
  // server-common.cpp parse_lora_request: a request's `lora: [{id, scale}]` sets the adapters by their --lora place.
  loraBy: 'lora-id',
  failures: LLAMACPP_FAILURES,
  command(config, ctx, { model }) {
    return {
      command: config.llamaServer,
      head: [...(isLocalModel(model) ? ['-m', model] : ['-hf', model]), '--host', ctx.host, '--port', String(ctx.port)],
      tail: ['--metrics'],
      ...(config.servedModelName ? { model: config.servedModelName } : {}),
    };
  },
  preRunWarnings(config, request) {
    const slot = perSlotContext(config);
    const need = request.inputTokens + request.outputTokens;
    if (slot === undefined || need <= slot) return [];
    const slots = config.maxSeqs ?? 1;
    return [
      `requests of ${request.inputTokens} + ${request.outputTokens} tokens exceed llama.cpp's per-slot context of ${slot} (--ctx-size ${config.contextSize} / ${slots} slots): llama-server will answer HTTP 400; raise --ctx-size to at least ${need * slots} or lower --max-seqs`,
    ];
  },
});
