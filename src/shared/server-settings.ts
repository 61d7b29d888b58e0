/**
 * The server settings more than one engine has, each declared once. An engine module picks the ones it has
 * (and says how each maps to its command line); settings only one engine has are declared in its module.
 */
import { z } from 'zod';
import { parseLoraList } from './lora.js';
import { atMost, setting } from './setting.js';

/** What every server has: the model and the name requests carry, and how long it may take to be ready. */
export const MODEL_SETTINGS = {
  model: setting(z.string().min(1).optional(), {
    label: 'Model',
    metavar: 'M',
    help: 'the model to serve',
    group: 'server',
  }),
  servedModelName: setting(z.string().optional(), {
    label: 'Served model name',
    metavar: 'NAME',
    help: 'name the server answers to',
    group: 'server',
    advanced: true,
    placeholder: 'the model',
  }),
  startTimeoutMs: setting(
    z
      .number()
      .int()
      .positive()
      .max(...atMost(7 * 86_400_000, 'a server that has not loaded by then never will', '7 days'))
      .default(20 * 60_000),
    {
      flag: 'start-timeout',
      label: 'Start time-out',
      metavar: 'T',
      help: 'readiness time-out: seconds, or 90s / 20m / 1h',
      group: 'server',
      syntax: 'duration',
      advanced: true,
      condition: false,
    },
  ),
};

/** What every server servebench launches has: where it binds, its environment and extra arguments. */
export const LAUNCH_SETTINGS = {
  ...MODEL_SETTINGS,
  host: setting(z.string().default('127.0.0.1'), {
    label: 'Host',
    metavar: 'H',
    help: 'bind address',
    group: 'server',
    advanced: true,
    condition: false,
  }),
  port: setting(z.number().int().min(0).max(65535).default(0), {
    label: 'Port',
    metavar: 'P',
    help: 'port (default: a free one)',
    group: 'server',
    advanced: true,
    condition: false,
    placeholder: 'a free one',
  }),
  extraArgs: setting(z.array(z.string()).default([]), {
    flag: 'server-arg',
    label: 'Extra arguments',
    metavar: 'ARG',
    help: 'extra engine argument, repeatable (--server-arg=--trust-remote-code)',
    group: 'server',
    syntax: 'args',
    trust: 'args',
    placeholder: '--trust-remote-code --enforce-eager',
    engineBound: true,
  }),
  env: setting(z.record(z.string(), z.string()).default({}), {
    label: 'Environment',
    metavar: 'KEY=VALUE',
    help: 'environment for the server, repeatable (secrets never reach logs)',
    group: 'server',
    syntax: 'env',
    trust: 'env',
  }),
};

/** A Python engine's interpreter. */
export const PYTHON = setting(z.string().default('python3'), {
  label: 'Python',
  metavar: 'PATH',
  help: 'interpreter of the venv/conda env with the engine',
  group: 'server',
  trust: 'program',
  // Which engine it runs is recorded as the engine and its version; the path itself changes nothing measured.
  condition: false,
});

/** Settings several GPU engines share (each maps them to its own flag). */
export const ENGINE_SETTINGS = {
  quantization: setting(z.string().optional(), {
    label: 'Quantization',
    metavar: 'Q',
    help: "weight quantization, checked against the installed engine's own --help where it lists them",
    group: 'server',
    sweep: true,
    placeholder: 'none',
  }),
  dtype: setting(z.string().optional(), {
    label: 'dtype',
    metavar: 'D',
    help: 'weights and activations dtype',
    group: 'server',
    sweep: true,
    placeholder: 'auto',
  }),
  kvCacheDtype: setting(z.string().optional(), {
    label: 'KV-cache dtype',
    metavar: 'D',
    help: 'KV-cache dtype',
    group: 'server',
    sweep: true,
    placeholder: 'engine default',
  }),
  tensorParallel: setting(z.number().int().positive().optional(), {
    flag: 'tp',
    label: 'Tensor parallel',
    metavar: 'N',
    help: 'tensor parallel size',
    unit: 'GPUs',
    group: 'server',
    sweep: true,
    placeholder: '1',
  }),
  maxModelLen: setting(z.number().int().positive().optional(), {
    label: 'Max model length',
    metavar: 'L',
    help: 'max tokens per request',
    unit: 'tokens',
    group: 'server',
    sweep: true,
    placeholder: 'from the model',
  }),
  gpuMemoryFraction: setting(z.number().gt(0).lte(1).optional(), {
    flag: 'gpu-memory',
    label: 'GPU memory fraction',
    metavar: 'F',
    help: 'GPU memory fraction 0-1 the engine takes',
    group: 'server',
    sweep: true,
    placeholder: 'engine default',
  }),
  maxSeqs: setting(z.number().int().positive().optional(), {
    label: 'Max seqs',
    metavar: 'N',
    help: 'max concurrent sequences',
    group: 'server',
    sweep: true,
    placeholder: 'engine default',
  }),
  prefixCaching: setting(z.boolean().optional(), {
    off: 'no-prefix-caching',
    label: 'Prefix caching',
    help: "turn the engine's prefix cache on or off (default: the engine's)",
    group: 'server',
    advanced: true,
  }),
  seed: setting(z.number().int().min(0).optional(), {
    label: 'Seed',
    metavar: 'N',
    help: "the engine's and the prompts' random seed",
    group: 'server',
    advanced: true,
    placeholder: '0',
  }),
};

/** LoRA adapters the server serves and the requests spread over (the request's model names the adapter). */
export const LORA_SETTING = setting(
  z
    .string()
    .superRefine((text, ctx) => {
      const parsed = parseLoraList(text);
      if (!parsed.ok) ctx.addIssue({ code: 'custom', message: parsed.error });
    })
    .optional(),
  {
    flag: 'lora',
    label: 'LoRA adapters',
    metavar: 'NAME[=PATH][:W],...',
    help: "LoRA adapters the requests spread over, each request's model naming one (a launched server loads NAME=PATH; :W weighs its share, --lora-pick)",
    group: 'server',
    advanced: true,
    placeholder: 'none: the base model',
  },
);

/** Diffusion (block) decoding parameters: part of a diffusion model's identity. */
export const DIFFUSION_SETTINGS = {
  blockSize: setting(z.number().int().positive().default(32), {
    label: 'Block size',
    metavar: 'B',
    help: 'diffusion (block) decoding: tokens per block',
    unit: 'tokens',
    group: 'diffusion',
    sweep: true,
    prefill: true,
  }),
  threshold: setting(z.number().gt(0).lte(1).default(0.95), {
    label: 'Threshold',
    metavar: 'T',
    help: 'diffusion decoding: confidence a token needs to be accepted',
    group: 'diffusion',
    sweep: true,
    prefill: true,
  }),
  algorithm: setting(z.string().default('LowConfidence'), {
    flag: 'dllm-algorithm',
    label: 'Algorithm',
    metavar: 'A',
    help: 'diffusion decoding algorithm',
    group: 'diffusion',
    advanced: true,
  }),
};

/** The whole diffusion section, as a config holds it (absent: not a diffusion model). */
export const DiffusionConfigSchema = z.object(DIFFUSION_SETTINGS);

/** The order server settings are listed in (help, form, docs); an engine's own settings follow in registry order. */
export const SERVER_SETTING_ORDER: readonly string[] = [
  'model',
  'servedModelName',
  'python',
  ...Object.keys(ENGINE_SETTINGS),
  'lora',
  'startTimeoutMs',
  'host',
  'port',
  'extraArgs',
  'env',
  'diffusion',
];

/** The launch settings of a config, defaults applied (a config of an engine that launches has them all). */
export const LaunchSettingsSchema = z.object(LAUNCH_SETTINGS);
export type LaunchSettings = z.output<typeof LaunchSettingsSchema>;
