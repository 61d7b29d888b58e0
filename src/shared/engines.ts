/**
 * The engines servebench knows, as the app and the config schema see them: id, name, hint and choices
 * (which server fields apply to which engine is said by the field table, src/shared/fields.ts). Everything else about an engine (argv, probe, log facts, failures, metrics)
 * lives in its module under src/core/servers/engines/, whose registry follows this list's order.
 * It sits in shared because the renderer and the zod schema may not import core.
 */

/** llama.cpp's -fa values (common/arg.cpp). */
export const FLASH_ATTENTION_MODES = ['on', 'off', 'auto'] as const;

/** How an engine presents itself in the app and the docs. */
export interface EngineDescription {
  readonly kind: string;
  /** Display name. */
  readonly name: string;
  /** One line for the engine picker. */
  readonly hint: string;
  /** The engine needs --model before it can start. */
  readonly requiresModel: boolean;
  /** What --model names for this engine (the model-missing message and the form's placeholder). */
  readonly modelHint: string;
  /** How to install it (docs and the engine-missing fix). */
  readonly install: string;
  /** Suggested values per server field (the installed engine's --help has the last word where servebench reads it). */
  readonly choices?: Partial<Record<'quantization' | 'dtype' | 'kvCacheDtype' | 'flashAttention', readonly string[]>>;
}

const HF_MODEL = 'a hub id like org/name or a local folder';

const HF_CHOICES = {
  quantization: ['awq', 'gptq', 'fp8', 'bitsandbytes'],
  dtype: ['auto', 'bfloat16', 'float16'],
  kvCacheDtype: ['auto', 'fp8'],
} as const;

/** The registry list, in picker order; adding an engine adds one entry here and one module in core. */
export const ENGINE_DESCRIPTIONS = [
  {
    kind: 'sim',
    name: 'Simulator',
    hint: 'its numbers come from a simulated engine and GPU, and are marked SIMULATED wherever they appear',
    requiresModel: false,
    modelHint: 'a name for the simulated model',
    install: 'built in',
  },
  {
    kind: 'vllm',
    name: 'vLLM',
    hint: 'servebench launches vllm serve',
    requiresModel: true,
    modelHint: HF_MODEL,
    install: 'pip install vllm',
    choices: HF_CHOICES,
  },
  {
    kind: 'sglang',
    name: 'SGLang',
    hint: 'servebench launches sglang.launch_server',
    requiresModel: true,
    modelHint: HF_MODEL,
    install: 'pip install "sglang[all]"',
    choices: HF_CHOICES,
  },
  {
    kind: 'llamacpp',
    name: 'llama.cpp',
    hint: 'servebench launches llama-server with a .gguf model (or a Hugging Face repo for -hf)',
    requiresModel: true,
    modelHint: 'a .gguf file or a Hugging Face repo',
    install: 'build llama.cpp (`cmake --build build --target llama-server`) or `brew install llama.cpp`',
    // common/arg.cpp: kv_cache_types
    choices: {
      kvCacheDtype: ['f32', 'f16', 'bf16', 'q8_0', 'q4_0', 'q4_1', 'iq4_nl', 'q5_0', 'q5_1'],
      flashAttention: FLASH_ATTENTION_MODES,
    },
  },
  {
    kind: 'command',
    name: 'Command',
    hint: 'any OpenAI-compatible server started from a command line ({port} and {model} are filled in)',
    requiresModel: false,
    modelHint: 'the served model name, filled in for {model}',
    install: 'install the server the command runs',
  },
  {
    kind: 'attach',
    name: 'Attach URL',
    hint: 'an OpenAI-compatible server someone else runs',
    requiresModel: false,
    modelHint: 'the served model name (asked from the server when not given)',
    install: 'nothing: servebench connects to a running server',
  },
] as const satisfies readonly EngineDescription[];

/** An engine id. */
export type EngineKind = (typeof ENGINE_DESCRIPTIONS)[number]['kind'];

/** Every engine id, in registry order. */
export const ENGINE_KINDS = ENGINE_DESCRIPTIONS.map((d) => d.kind) as [EngineKind, ...EngineKind[]];

/** The description of one engine. */
export function describeEngine(kind: EngineKind): EngineDescription {
  return ENGINE_DESCRIPTIONS.find((d) => d.kind === kind) as EngineDescription;
}

/** The engines `--engine` accepts (attach is chosen with --url instead). */
export const LAUNCHABLE_ENGINES: readonly EngineKind[] = ENGINE_KINDS.filter((k) => k !== 'attach');

/** The one check of "model required" (CLI, app form, launcher): the line to show, or undefined when fine. */
export function modelProblem(kind: EngineKind, model: string | undefined): string | undefined {
  const d = describeEngine(kind);
  if (!d.requiresModel || (model ?? '').trim() !== '') return undefined;
  return `${d.name} needs a model: pass --model (${d.modelHint})`;
}
