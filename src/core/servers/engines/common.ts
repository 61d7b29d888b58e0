import { loraAdapters, type LoraAdapter } from '../../../shared/lora.js';
import type { EngineDescription, FailurePattern } from './types.js';

/** A number from a log field ("51,200" too); undefined when it is none. */
export const num = (s: string | undefined): number | undefined => {
  if (s === undefined) return undefined;
  const n = Number(s.replace(/,/g, ''));
  return Number.isFinite(n) ? n : undefined;
};

/** The one check of "model required" (CLI, app form, launcher): the line to show, or undefined when fine. */
export function modelProblemOf(engine: EngineDescription, model: string | undefined): string | undefined {
  if (!engine.requiresModel || (model ?? '').trim() !== '') return undefined;
  return `${engine.name} needs a model: pass --model (${engine.modelHint})`;
}

/** The full command line as one printable string (for logs and the run record; never executed). */
export function formatCommand(command: string, args: readonly string[]): string {
  const quote = (s: string): string => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);
  return [command, ...args].map(quote).join(' ');
}

/** The install fix of a Python engine: the pip command and the hint to point --python at the right env. */
export const pythonInstallFix = (pip: string): string =>
  `install it with \`${pip}\`, or pass --python PATH to the interpreter of the venv/conda env that has it`;

/** vLLM's KV-cache-too-small lines (SGLang prints the first one too). */
export const KV_CACHE_TOO_SMALL: FailurePattern[] = [
  {
    kind: 'kv-cache-too-small',
    pattern:
      /max seq len \((\d+)\) is larger than the maximum number of tokens that can be stored in KV cache \((\d+)\)/,
    message: (m) => `max model length ${m[1]} does not fit in the KV cache (${m[2]} tokens)`,
    fix: (m) => `lower --max-model-len to at most ${m[2]} or raise --gpu-memory (or use --kv-cache-dtype fp8)`,
  },
  {
    kind: 'kv-cache-too-small',
    pattern:
      /To serve at least one request with the models?'s max seq len \((\d+)\)(?:.*?estimated maximum model length is (\d+))?/,
    message: (m) => `max model length ${m[1]} does not fit in the KV cache`,
    fix: (m) =>
      `lower --max-model-len${m[2] ? ` to at most ${m[2]}` : ''} or raise --gpu-memory (or use --kv-cache-dtype fp8)`,
  },
  {
    kind: 'kv-cache-too-small',
    pattern: /estimated maximum model length is (\d+)/,
    message: (m) => `the KV cache holds at most ${m[1]} tokens per request`,
    fix: () => 'lower --max-model-len or raise --gpu-memory',
  },
];

const HF_FIX =
  'check --model (a hub id like org/name or a local folder); private or gated models need --env HF_TOKEN=hf_...';

/** Hugging Face model look-up failures of the engines that load from the hub (vLLM, SGLang). */
export const HF_MODEL_FAILURES: FailurePattern[] = [
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
    fix: () => HF_FIX,
  },
  {
    kind: 'model-not-found',
    pattern:
      /RepositoryNotFoundError|Repository Not Found for url|401 Client Error|is not a local folder and is not a valid model identifier|does not appear to have a file named config\.json/,
    message: () => 'the model was not found on Hugging Face or on disk',
    fix: () => HF_FIX,
  },
];

/** A Python engine whose module is missing. */
export const noModuleFailure = (pkg: string, pip: string): FailurePattern => ({
  kind: 'engine-missing',
  pattern: new RegExp(`No module named '?(${pkg})`),
  message: (m) => `python has no module '${m[1]}'`,
  fix: () => pythonInstallFix(pip),
});

/** Failures any engine can print (CUDA out of memory, a taken port, a driver mismatch), after its own. */
export function commonFailures(engine: { name: string; memoryHint?: string }): FailurePattern[] {
  const memory = engine.memoryHint ?? 'the server memory settings';
  return [
    {
      kind: 'oom',
      pattern: /CUDA out of memory|torch\.(?:cuda\.)?OutOfMemoryError|CUDA error: out of memory|OutOfMemoryError/,
      message: () => 'the GPU ran out of memory',
      fix: () => `lower ${memory}, --max-model-len or --max-seqs; quantize; or free the GPU (see nvidia-smi)`,
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
      fix: () =>
        `install a ${engine.name} build for your driver's CUDA version (nvidia-smi shows it), or update the NVIDIA driver`,
    },
  ];
}

/** The adapters of --lora for an engine that loads them at launch: each needs its path (NAME=PATH), else one line. */
export function launchedAdapters(text: string, engine: string): LoraAdapter[] {
  const adapters = loraAdapters(text);
  const bare = adapters.filter((a) => a.path === undefined).map((a) => a.name);
  if (bare.length > 0)
    throw new Error(
      `${engine} loads LoRA adapters at launch: give each its path, as --lora ${bare[0]}=/path/to/adapter (missing for ${bare.join(', ')})`,
    );
  return adapters;
}
