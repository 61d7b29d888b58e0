import type { EngineKind } from '../../shared/config.js';
import type { ServerFailure } from './types.js';

type FailureKind = ServerFailure['kind'];

interface FailurePattern {
  kind: FailureKind;
  pattern: RegExp;
  message: (match: RegExpMatchArray, engine: EngineKind) => string;
  fix: (engine: EngineKind, match: RegExpMatchArray) => string;
}

const engineName = (engine: EngineKind): string =>
  engine === 'sglang' ? 'SGLang' : engine === 'vllm' ? 'vLLM' : 'the server';
const memoryFlag = (engine: EngineKind): string =>
  engine === 'sglang' ? '--gpu-memory (SGLang --mem-fraction-static)' : '--gpu-memory (vLLM --gpu-memory-utilization)';

/**
 * Known fatal log lines of vLLM and SGLang, most specific first (vLLM's generic
 * "Engine core initialization failed" follows the real cause, so it is not a class of its own).
 */
const PATTERNS: FailurePattern[] = [
  {
    kind: 'kv-cache-too-small',
    pattern:
      /max seq len \((\d+)\) is larger than the maximum number of tokens that can be stored in KV cache \((\d+)\)/,
    message: (m) => `max model length ${m[1]} does not fit in the KV cache (${m[2]} tokens)`,
    fix: (_e, m) => `lower --max-model-len to at most ${m[2]} or raise --gpu-memory (or use --kv-cache-dtype fp8)`,
  },
  {
    kind: 'kv-cache-too-small',
    pattern:
      /To serve at least one request with the models?'s max seq len \((\d+)\)(?:.*?estimated maximum model length is (\d+))?/,
    message: (m) => `max model length ${m[1]} does not fit in the KV cache`,
    fix: (_e, m) =>
      `lower --max-model-len${m[2] ? ` to at most ${m[2]}` : ''} or raise --gpu-memory (or use --kv-cache-dtype fp8)`,
  },
  {
    kind: 'kv-cache-too-small',
    pattern: /estimated maximum model length is (\d+)/,
    message: (m) => `the KV cache holds at most ${m[1]} tokens per request`,
    fix: () => 'lower --max-model-len or raise --gpu-memory',
  },
  {
    kind: 'oom',
    pattern:
      /Free memory on device.*?\(([\d.]+)\/([\d.]+) GiB\) on startup is less than desired GPU memory utilization \(([\d.]+)/,
    message: (m) => `only ${m[1]} of ${m[2]} GiB GPU memory is free, less than the requested fraction ${m[3]}`,
    fix: (e) => `free the GPU (another process holds memory: see nvidia-smi) or lower ${memoryFlag(e)}`,
  },
  {
    kind: 'oom',
    pattern: /No available memory for the cache blocks/,
    message: () => 'no GPU memory is left for the KV cache after loading the weights',
    fix: (e) => `raise ${memoryFlag(e)}, quantize (--quantization), use a smaller model or more GPUs (--tp)`,
  },
  {
    kind: 'oom',
    pattern: /Not enough memory\. Please try to increase --mem-fraction-static/,
    message: () => 'not enough GPU memory for the KV cache (SGLang)',
    fix: () =>
      'raise --gpu-memory (SGLang --mem-fraction-static), quantize, or use a smaller model or more GPUs (--tp)',
  },
  {
    kind: 'oom',
    pattern: /CUDA out of memory|torch\.(?:cuda\.)?OutOfMemoryError|CUDA error: out of memory|OutOfMemoryError/,
    message: () => 'the GPU ran out of memory',
    fix: (e) => `lower ${memoryFlag(e)}, --max-model-len or --max-seqs; quantize; or free the GPU (see nvidia-smi)`,
  },
  {
    kind: 'model-not-found',
    pattern:
      /GatedRepoError|Cannot access gated repo|You are trying to access a gated repo|is restricted and you are not in the authorized list/,
    message: () => 'the model is gated on Hugging Face and this machine has no access',
    fix: () =>
      'accept the model licence on huggingface.co and pass a token: --env HF_TOKEN=hf_... (or run `huggingface-cli login`)',
  },
  {
    kind: 'model-not-found',
    pattern: /Invalid repository ID or local directory specified: '([^']*)'/,
    message: (m) => `model '${m[1]}' is neither a Hugging Face repository nor a local directory with config.json`,
    fix: () =>
      'check --model (a hub id like org/name or a local folder); private or gated models need --env HF_TOKEN=hf_...',
  },
  {
    kind: 'model-not-found',
    pattern:
      /RepositoryNotFoundError|Repository Not Found for url|401 Client Error|is not a local folder and is not a valid model identifier|does not appear to have a file named config\.json/,
    message: () => 'the model was not found on Hugging Face or on disk',
    fix: () =>
      'check --model (a hub id like org/name or a local folder); private or gated models need --env HF_TOKEN=hf_...',
  },
  {
    kind: 'port-in-use',
    pattern: /Address already in use|\[Errno 98\]|EADDRINUSE/,
    message: () => 'the port is already in use',
    fix: () => 'choose another --port (or omit it to pick a free one), or stop the process that holds it',
  },
  {
    kind: 'cuda-mismatch',
    pattern:
      /The NVIDIA driver on your system is too old|CUDA driver version is insufficient for CUDA runtime version|cudaErrorInsufficientDriver|CUDA_ERROR_SYSTEM_DRIVER_MISMATCH|system has unsupported display driver \/ cuda driver combination|libcu(?:dart|blas)\.so\.[\d.]+: cannot open shared object file|Found no NVIDIA driver on your system|no kernel image is available for execution on the device/,
    message: () => 'the CUDA build of the engine does not match the installed NVIDIA driver or GPU',
    fix: (e) =>
      `install a ${engineName(e)}/PyTorch build for your driver's CUDA version (nvidia-smi shows it), or update the NVIDIA driver`,
  },
  {
    kind: 'engine-missing',
    pattern: /No module named '?(vllm|sglang)/,
    message: (m) => `python has no module '${m[1]}'`,
    fix: (e) => installFix(e),
  },
];

/** `pip install vllm` / `pip install "sglang[all]"`. */
export function pipInstallCommand(engine: EngineKind): string {
  return engine === 'sglang' ? 'pip install "sglang[all]"' : 'pip install vllm';
}

/** The install command for an engine, with the hint to point --python at a venv or conda env. */
export function installFix(engine: EngineKind): string {
  const pip = pipInstallCommand(engine);
  return `install it with \`${pip}\`, or pass --python PATH to the interpreter of the venv/conda env that has it`;
}

/** Classifies a failure from the engine's log lines; undefined when nothing known matches. */
export function classifyLog(lines: readonly string[], engine: EngineKind): Omit<ServerFailure, 'logTail'> | undefined {
  for (const p of PATTERNS) {
    for (const line of lines) {
      const match = line.match(p.pattern);
      if (match) return { kind: p.kind, message: p.message(match, engine), fix: p.fix(engine, match) };
    }
  }
  return undefined;
}

/** A failure for a server process that exited: classified from the log, else crashed/unknown with the last lines. */
export function failureFromExit(
  engine: EngineKind,
  lines: readonly string[],
  exit: { code: number | null; signal: NodeJS.Signals | null },
  phase: 'start' | 'run',
  tailLines = 30,
): ServerFailure {
  const logTail = lines.slice(-tailLines);
  const known = classifyLog(lines, engine);
  const how = exit.signal ? `was killed by ${exit.signal}` : `exited with code ${exit.code ?? '?'}`;
  if (known) return { ...known, message: `${known.message} (the server ${how})`, logTail };
  const last = [...lines]
    .reverse()
    .find((l) => l.trim().length > 0)
    ?.trim();
  const detail = last ? `; last line: ${last.length > 200 ? `${last.slice(0, 200)}...` : last}` : '';
  return {
    kind: phase === 'run' ? 'crashed' : 'unknown',
    message: `${engineName(engine)} ${how} ${phase === 'run' ? 'while serving' : 'during start-up'}${detail}`,
    fix: 'read the end of server.log in the run folder for the cause',
    logTail,
  };
}
