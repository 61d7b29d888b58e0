import { denoiseSteps, type SimProfile } from './profile.js';

/** Which engine the sim imitates: endpoints, log lines and /metrics names. */
export type Mimic = 'vllm' | 'sglang' | 'openai';

/** The engine version the sim claims in /version and its log lines. */
export const MIMIC_VERSION: Record<Mimic, string> = { vllm: '0.11.0', sglang: '0.5.3', openai: '0.0.0' };

const pad = (n: number, w = 2): string => String(n).padStart(w, '0');

function vllmTime(d: Date): string {
  return `${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

function sglangTime(d: Date): string {
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

const thousands = (n: number): string => n.toLocaleString('en-US');

export interface StartupContext {
  mimic: Mimic;
  model: string;
  host: string;
  port: number;
  profile: SimProfile;
  pid: number;
  now?: Date;
}

/** The first line, always: the user must never mistake the sim for a real engine. */
export function simBanner(c: StartupContext): string {
  const p = c.profile;
  // Block mode names its step count, so a sweep's log shows which denoising cost each server ran with.
  const block =
    p.blockSize > 0
      ? `; block diffusion: ${p.blockSize}-token blocks at threshold ${p.threshold} take ${denoiseSteps(p.blockSize, p.threshold, p.denoiseExponent)} denoising steps each`
      : '';
  return `servebench sim: SIMULATED ${c.mimic} engine, profile '${p.name}' (illustrative, not a measurement); seed-deterministic${block}`;
}

/** Log lines before the port opens (model load, KV cache sizing), in the engine's own format. */
export function loadLines(c: StartupContext): string[] {
  const d = c.now ?? new Date();
  const p = c.profile;
  const maxConc = (p.kvCacheTokens / p.maxModelLen).toFixed(2);
  if (c.mimic === 'vllm') {
    const api = `(APIServer pid=${c.pid}) INFO ${vllmTime(d)}`;
    const core = `(EngineCore_DP0 pid=${c.pid}) INFO ${vllmTime(d)}`;
    return [
      `${api} [api_server.py:1839] vLLM API server version ${MIMIC_VERSION.vllm}`,
      `${api} [utils.py:233] non-default args: {'model': '${c.model}', 'host': '${c.host}', 'port': ${c.port}, 'max_num_seqs': ${p.maxNumSeqs}, 'max_model_len': ${p.maxModelLen}}`,
      `${core} [core.py:77] Initializing a V1 LLM engine (v${MIMIC_VERSION.vllm}) with config: model='${c.model}', max_seq_len=${p.maxModelLen}, seed=0`,
      `${core} [gpu_model_runner.py:2602] Starting to load model ${c.model}...`,
      `${core} [gpu_model_runner.py:2634] Model loading took 14.99 GiB and 0.01 seconds`,
      `${core} [gpu_worker.py:298] Available KV cache memory: ${((p.gpuMemUsedMib - 15_400) / 1024).toFixed(2)} GiB`,
      `${core} [kv_cache_utils.py:1087] GPU KV cache size: ${thousands(p.kvCacheTokens)} tokens`,
      `${core} [kv_cache_utils.py:1091] Maximum concurrency for ${thousands(p.maxModelLen)} tokens per request: ${maxConc}x`,
      `${core} [core.py:214] init engine (profile, create kv cache, warmup model) took 0.01 seconds`,
    ];
  }
  if (c.mimic === 'sglang') {
    const t = `[${sglangTime(d)}]`;
    const tp = `[${sglangTime(d)} TP0]`;
    const availGb = (p.gpuMemTotalMib / 1024).toFixed(2);
    return [
      `${t} server_args=ServerArgs(model_path='${c.model}', host='${c.host}', port=${c.port}, max_running_requests=${p.maxNumSeqs}, context_length=${p.maxModelLen}, enable_metrics=True)`,
      `${tp} Load weight begin. avail mem=${availGb} GB`,
      `${tp} Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=${(p.gpuMemTotalMib / 1024 - 15).toFixed(2)} GB, mem usage=15.00 GB.`,
      `${tp} KV Cache is allocated. #tokens: ${p.kvCacheTokens}, K size: ${((p.kvCacheTokens * 64) / 1024 / 1024).toFixed(2)} GB, V size: ${((p.kvCacheTokens * 64) / 1024 / 1024).toFixed(2)} GB`,
      `${tp} max_total_num_tokens=${p.kvCacheTokens}, chunked_prefill_size=8192, max_prefill_tokens=16384, max_running_requests=${p.maxNumSeqs}, context_len=${p.maxModelLen}, available_gpu_mem=${((p.gpuMemTotalMib - p.gpuMemUsedMib) / 1024).toFixed(2)} GB`,
    ];
  }
  return [];
}

/** Lines once the HTTP port is open; the last one is the engine's ready line. */
export function readyLines(c: StartupContext): string[] {
  const d = c.now ?? new Date();
  const url = `http://${c.host}:${c.port}`;
  if (c.mimic === 'vllm') {
    const api = `(APIServer pid=${c.pid}) INFO ${vllmTime(d)}`;
    return [
      `${api} [api_server.py:1910] Starting vLLM API server 0 on ${url}`,
      `(APIServer pid=${c.pid}) INFO:     Started server process [${c.pid}]`,
      `(APIServer pid=${c.pid}) INFO:     Waiting for application startup.`,
      `(APIServer pid=${c.pid}) INFO:     Uvicorn running on ${url} (Press CTRL+C to quit)`,
      `(APIServer pid=${c.pid}) INFO:     Application startup complete.`,
    ];
  }
  if (c.mimic === 'sglang') {
    const t = `[${sglangTime(d)}]`;
    return [
      `${t} INFO:     Started server process [${c.pid}]`,
      `${t} INFO:     Waiting for application startup.`,
      `${t} INFO:     Application startup complete.`,
      `${t} INFO:     Uvicorn running on ${url} (Press CTRL+C to quit)`,
      `${t} The server is fired up and ready to roll!`,
    ];
  }
  return [`INFO:     Uvicorn running on ${url} (Press CTRL+C to quit)`, 'INFO:     Application startup complete.'];
}

/** The engine's own out-of-memory failure at start-up (oom-on-start fault). */
export function oomLines(c: StartupContext): string[] {
  const d = c.now ?? new Date();
  if (c.mimic === 'sglang') {
    const tp = `[${sglangTime(d)} TP0]`;
    return [
      `${tp} Scheduler hit an exception: Traceback (most recent call last):`,
      '  File "/usr/local/lib/python3.12/dist-packages/sglang/srt/mem_cache/memory_pool.py", line 412, in __init__',
      'RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.',
    ];
  }
  const core = `(EngineCore_DP0 pid=${c.pid}) ERROR ${vllmTime(d)}`;
  return [
    `${core} [core.py:708] EngineCore failed to start.`,
    `${core} [core.py:708] ValueError: No available memory for the cache blocks. Try increasing \`gpu_memory_utilization\` when initializing the engine.`,
    `(APIServer pid=${c.pid}) RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}`,
  ];
}
