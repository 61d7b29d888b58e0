import { existsSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { UserError } from '../errors.js';
import { FileReadError, readTextFileSync } from '../bounded-file.js';
import { parseYamlText } from '../yaml-text.js';
import { resourcePath } from '../package-root.js';

/**
 * The simulated model + GPU: every number the step-time model, the KV cache and the fake GPU use.
 * Profiles in resources/sim-profiles are illustrative, not measurements (docs/simulator.md).
 */
export interface SimProfile {
  name: string;
  description: string;
  /** Longest prompt + output a request may have (tokens). */
  maxModelLen: number;
  /** Most sequences running in one batch (vLLM --max-num-seqs, SGLang --max-running-requests). */
  maxNumSeqs: number;
  /** KV cache capacity in tokens; running sequences hold prompt + generated tokens. */
  kvCacheTokens: number;
  /** Prefill speed: a step that admits requests costs their uncached prompt tokens / this. */
  prefillTokPerS: number;
  /** Fixed cost of one decode step (ms). */
  stepBaseMs: number;
  /** Extra cost per running sequence in a step (ms). */
  stepPerSeqMs: number;
  /** Extra cost of a step per distinct LoRA adapter among its sequences (ms). */
  loraStepMs: number;
  /** Relative seeded jitter of every step time (0.05 = +-5 %). */
  jitter: number;
  /** Chance per generated token (after min_tokens) that the model stops early, unless ignore_eos. */
  eosProb: number;
  /** Diffusion block size (tokens per chunk); 0 = autoregressive, one token per step. */
  blockSize: number;
  /** Diffusion confidence threshold in (0, 1]; lower = fewer denoising steps = faster. */
  threshold: number;
  /** Shape of the denoising curve: steps = 1 + (blockSize - 1) * threshold^denoiseExponent. */
  denoiseExponent: number;
  /** Automatic prefix caching (16-token blocks): cached prompt tokens skip prefill. */
  prefixCaching: boolean;
  /** Zero-delay mode: every response is written at once, no step time (client benchmarks). */
  instant: boolean;
  /** Reasoning mode: the first N tokens of each chat answer stream as delta.reasoning_content (0 = off). */
  reasoningTokens: number;
  gpuName: string;
  gpuCount: number;
  gpuMemTotalMib: number;
  gpuMemUsedMib: number;
  gpuMaxSmClockMhz: number;
  gpuIdleSmClockMhz: number;
  gpuMemClockMhz: number;
  gpuIdlePowerW: number;
  /** Power the GPU would draw at full load and full clock; above gpuPowerLimitW it is capped (bit 0x4). */
  gpuFullPowerW: number;
  gpuPowerLimitW: number;
  gpuAmbientC: number;
  /** Heating at full load (°C/s). */
  gpuHeatRate: number;
  /** Newtonian cooling towards ambient (1/s). Full-load equilibrium = ambient + heatRate / coolRate. */
  gpuCoolRate: number;
  /** Slowdown temperature: above it the SM clock falls (bit 0x20; 0x40 from 5 °C above). */
  gpuThermalLimitC: number;
  /** Lowest SM clock as a share of max while throttling. */
  gpuMinClockRatio: number;
  /** How fast the clock ratio falls while too hot (per second); it recovers at half this rate. */
  gpuThrottleRate: number;
  /** Memory temperature = GPU temperature + this; null = the card does not report it ([N/A]). */
  gpuMemTempOffsetC: number | null;
  gpuDriverVersion: string;
  gpuCudaVersion: string;
}

type Kind = 'int' | 'number' | 'bool' | 'string' | 'number-or-none';

/** One profile parameter: its YAML key and CLI flag (the same kebab-case name), type, bounds and meaning. */
export interface ProfileParam {
  key: Exclude<keyof SimProfile, 'name' | 'description'>;
  flag: string;
  kind: Kind;
  min?: number;
  max?: number;
  doc: string;
}

/** Every tunable parameter; drives the YAML reader, the CLI flags, validation and --help. */
export const PROFILE_PARAMS: readonly ProfileParam[] = [
  {
    key: 'maxModelLen',
    flag: 'max-model-len',
    kind: 'int',
    min: 16,
    doc: 'longest prompt + output per request (tokens)',
  },
  { key: 'maxNumSeqs', flag: 'max-num-seqs', kind: 'int', min: 1, doc: 'most sequences in one batch' },
  { key: 'kvCacheTokens', flag: 'kv-cache-tokens', kind: 'int', min: 16, doc: 'KV cache capacity (tokens)' },
  { key: 'prefillTokPerS', flag: 'prefill-tok-per-s', kind: 'number', min: 1, doc: 'prefill speed (prompt tokens/s)' },
  { key: 'stepBaseMs', flag: 'step-base-ms', kind: 'number', min: 0, doc: 'fixed cost of a decode step (ms)' },
  { key: 'stepPerSeqMs', flag: 'step-per-seq-ms', kind: 'number', min: 0, doc: 'step cost per running sequence (ms)' },
  {
    key: 'loraStepMs',
    flag: 'lora-step-ms',
    kind: 'number',
    min: 0,
    doc: 'step cost per distinct LoRA adapter in the batch (ms)',
  },
  { key: 'jitter', flag: 'jitter', kind: 'number', min: 0, max: 0.9, doc: 'relative seeded jitter of step times' },
  {
    key: 'eosProb',
    flag: 'eos-prob',
    kind: 'number',
    min: 0,
    max: 1,
    doc: 'early-stop chance per token unless ignore_eos',
  },
  { key: 'blockSize', flag: 'block-size', kind: 'int', min: 0, doc: 'diffusion block size; 0 = autoregressive' },
  {
    key: 'threshold',
    flag: 'threshold',
    kind: 'number',
    min: 0.01,
    max: 1,
    doc: 'diffusion confidence threshold (lower = faster)',
  },
  { key: 'denoiseExponent', flag: 'denoise-exponent', kind: 'number', min: 0, doc: 'denoising curve exponent' },
  { key: 'prefixCaching', flag: 'prefix-caching', kind: 'bool', doc: 'automatic prefix caching (true|false)' },
  { key: 'instant', flag: 'instant', kind: 'bool', doc: 'zero-delay mode: all chunks at once (true|false)' },
  {
    key: 'reasoningTokens',
    flag: 'reasoning-tokens',
    kind: 'int',
    min: 0,
    doc: 'reasoning mode: first N tokens of a chat answer as reasoning_content',
  },
  { key: 'gpuName', flag: 'gpu-name', kind: 'string', doc: 'fake GPU name' },
  { key: 'gpuCount', flag: 'gpu-count', kind: 'int', min: 1, max: 16, doc: 'number of fake GPUs' },
  { key: 'gpuMemTotalMib', flag: 'gpu-mem-total', kind: 'int', min: 1, doc: 'GPU memory (MiB)' },
  { key: 'gpuMemUsedMib', flag: 'gpu-mem-used', kind: 'int', min: 0, doc: 'GPU memory held by the engine (MiB)' },
  { key: 'gpuMaxSmClockMhz', flag: 'gpu-max-sm-clock', kind: 'int', min: 1, doc: 'max SM clock (MHz)' },
  { key: 'gpuIdleSmClockMhz', flag: 'gpu-idle-sm-clock', kind: 'int', min: 1, doc: 'idle SM clock (MHz)' },
  { key: 'gpuMemClockMhz', flag: 'gpu-mem-clock', kind: 'int', min: 1, doc: 'memory clock (MHz)' },
  { key: 'gpuIdlePowerW', flag: 'gpu-idle-power', kind: 'number', min: 0, doc: 'idle power draw (W)' },
  { key: 'gpuFullPowerW', flag: 'gpu-full-power', kind: 'number', min: 0, doc: 'uncapped full-load power (W)' },
  { key: 'gpuPowerLimitW', flag: 'gpu-power-limit', kind: 'number', min: 1, doc: 'enforced power limit (W)' },
  { key: 'gpuAmbientC', flag: 'gpu-ambient', kind: 'number', doc: 'ambient / idle temperature (°C)' },
  { key: 'gpuHeatRate', flag: 'gpu-heat-rate', kind: 'number', min: 0, doc: 'heating at full load (°C/s)' },
  { key: 'gpuCoolRate', flag: 'gpu-cool-rate', kind: 'number', min: 0, doc: 'cooling towards ambient (1/s)' },
  { key: 'gpuThermalLimitC', flag: 'gpu-thermal-limit', kind: 'number', doc: 'slowdown temperature (°C)' },
  {
    key: 'gpuMinClockRatio',
    flag: 'gpu-min-clock-ratio',
    kind: 'number',
    min: 0.05,
    max: 1,
    doc: 'lowest clock share when throttled',
  },
  {
    key: 'gpuThrottleRate',
    flag: 'gpu-throttle-rate',
    kind: 'number',
    min: 0,
    doc: 'clock ratio drop per second when hot',
  },
  {
    key: 'gpuMemTempOffsetC',
    flag: 'gpu-mem-temp-offset',
    kind: 'number-or-none',
    doc: "memory temp offset (°C) or 'none' for [N/A]",
  },
  { key: 'gpuDriverVersion', flag: 'gpu-driver-version', kind: 'string', doc: 'driver version nvidia-smi reports' },
  { key: 'gpuCudaVersion', flag: 'gpu-cuda-version', kind: 'string', doc: 'CUDA version nvidia-smi reports' },
];

/** Built-in base every profile file extends: an 8B model in bf16 on one H200 (illustrative). */
export const BASE_PROFILE: SimProfile = {
  name: 'base',
  description: 'Illustrative base: an 8B dense model in bf16 on one H200.',
  maxModelLen: 32768,
  maxNumSeqs: 256,
  kvCacheTokens: 700_000,
  prefillTokPerS: 40_000,
  stepBaseMs: 7,
  stepPerSeqMs: 0.08,
  loraStepMs: 0.6,
  jitter: 0.05,
  eosProb: 0.002,
  blockSize: 0,
  threshold: 0.95,
  denoiseExponent: 12,
  prefixCaching: true,
  instant: false,
  reasoningTokens: 0,
  gpuName: 'NVIDIA H200',
  gpuCount: 1,
  gpuMemTotalMib: 143_771,
  gpuMemUsedMib: 129_300,
  gpuMaxSmClockMhz: 1980,
  gpuIdleSmClockMhz: 345,
  gpuMemClockMhz: 3201,
  gpuIdlePowerW: 75,
  gpuFullPowerW: 620,
  gpuPowerLimitW: 700,
  gpuAmbientC: 32,
  gpuHeatRate: 1.2,
  gpuCoolRate: 0.03,
  gpuThermalLimitC: 87,
  gpuMinClockRatio: 0.5,
  gpuThrottleRate: 0.5,
  gpuMemTempOffsetC: 6,
  gpuDriverVersion: '570.86.15',
  gpuCudaVersion: '12.8',
};

/** Profile used when none is named. */
export const DEFAULT_PROFILE_NAME = 'h200-llama8b-bf16';

const byFlag = new Map(PROFILE_PARAMS.map((p) => [p.flag, p]));

/** Converts and checks one parameter value (from YAML or a flag); throws a UserError naming the fix. */
function coerceParam(param: ProfileParam, raw: unknown, where: string): SimProfile[ProfileParam['key']] {
  const bad = (want: string): never => {
    throw new UserError(`${where}: '${param.flag}' must be ${want} (got ${JSON.stringify(raw)})`);
  };
  switch (param.kind) {
    case 'string':
      if (typeof raw !== 'string' && typeof raw !== 'number') bad('a string');
      return String(raw);
    case 'bool':
      if (typeof raw === 'boolean') return raw;
      if (raw === 'true' || raw === '1' || raw === 'yes') return true;
      if (raw === 'false' || raw === '0' || raw === 'no') return false;
      return bad('true or false');
    case 'number-or-none':
    case 'int':
    case 'number': {
      if (param.kind === 'number-or-none' && (raw === null || raw === 'none' || raw === 'null')) return null;
      const n = typeof raw === 'number' ? raw : typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : NaN;
      const range = `${param.min !== undefined ? ` >= ${param.min}` : ''}${param.max !== undefined ? ` <= ${param.max}` : ''}`;
      const want = `${param.kind === 'int' ? 'a whole number' : 'a number'}${range}`;
      if (!Number.isFinite(n)) return bad(want);
      if (param.kind === 'int' && !Number.isInteger(n)) return bad(want);
      if (param.min !== undefined && n < param.min) return bad(want);
      if (param.max !== undefined && n > param.max) return bad(want);
      return n;
    }
  }
}

/** Returns a copy of the profile with kebab-case parameter overrides applied (flags or YAML). */
export function applyOverrides(profile: SimProfile, overrides: Record<string, unknown>, where: string): SimProfile {
  const out: SimProfile = { ...profile };
  for (const [flag, raw] of Object.entries(overrides)) {
    const param = byFlag.get(flag);
    if (!param) throw new UserError(`${where}: unknown parameter '${flag}'; see docs/simulator.md for the list`);
    (out as unknown as Record<string, unknown>)[param.key] = coerceParam(param, raw, where);
  }
  return out;
}

/** Cross-parameter checks the engine itself would refuse to start without. */
export function validateProfile(p: SimProfile): SimProfile {
  if (p.kvCacheTokens < p.maxModelLen) {
    throw new UserError(
      `profile '${p.name}': kv-cache-tokens (${p.kvCacheTokens}) is smaller than max-model-len (${p.maxModelLen}); lower --max-model-len or raise --kv-cache-tokens`,
    );
  }
  if (p.gpuMemUsedMib > p.gpuMemTotalMib) {
    throw new UserError(`profile '${p.name}': gpu-mem-used exceeds gpu-mem-total; lower --gpu-mem-used`);
  }
  return p;
}

let profilesDirCache: string | undefined;

/**
 * Finds resources/sim-profiles by walking up from this module: the same code runs from src/ (tests),
 * from dist/ (bundled CLI) and from a packaged app; SERVEBENCH_RESOURCES overrides.
 */
function profilesDir(): string {
  if (profilesDirCache) return profilesDirCache;
  let dir: string;
  try {
    dir = resourcePath('sim-profiles');
  } catch {
    throw new UserError('cannot find resources/sim-profiles; set SERVEBENCH_RESOURCES to the resources folder');
  }
  if (!existsSync(dir)) throw new UserError(`cannot find ${dir}; set SERVEBENCH_RESOURCES to the resources folder`);
  return (profilesDirCache = dir);
}

/** Names of the bundled profiles (file names without .yaml). */
export function listProfiles(): string[] {
  return readdirSync(profilesDir())
    .filter((f) => f.endsWith('.yaml'))
    .map((f) => f.slice(0, -'.yaml'.length))
    .sort();
}

/** A profile is a few dozen parameters: past this it is not a profile. */
const PROFILE_MAX_BYTES = 256 * 1024;

function readProfileFile(file: string, depth: number): SimProfile {
  let text: string;
  try {
    text = readTextFileSync(file, {
      what: `sim profile ${file}`,
      maxBytes: PROFILE_MAX_BYTES,
      expected: 'a YAML file',
    });
  } catch (error) {
    if (error instanceof FileReadError && error.refusal === 'missing')
      throw new UserError(
        `cannot read sim profile ${file}: no such file; pass an existing YAML file to --profile-file`,
      );
    throw error;
  }
  const parsed = parseYamlText(text);
  if ('problem' in parsed)
    throw new UserError(`cannot read sim profile ${file}: ${parsed.problem}; pass a YAML file to --profile-file`);
  const doc = parsed.value;
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) {
    throw new UserError(`sim profile ${file} is not a YAML mapping; see resources/sim-profiles for examples`);
  }
  const d = doc as Record<string, unknown>;
  let base = BASE_PROFILE;
  if (typeof d.extends === 'string') {
    if (depth > 4) throw new UserError(`sim profile ${file}: 'extends' nests too deeply`);
    // A bundled name, or a file beside this one: never a path taken from the cwd of whoever runs it.
    const near = /[\\/]|\.ya?ml$/.test(d.extends) ? resolve(dirname(file), d.extends) : d.extends;
    base = readProfileFile(resolveProfilePath(near), depth + 1);
  }
  const params = d.params ?? {};
  if (typeof params !== 'object' || Array.isArray(params) || params === null) {
    throw new UserError(`sim profile ${file}: 'params' must be a mapping of parameter: value`);
  }
  const name = typeof d.name === 'string' ? d.name : file.replace(/^.*[\\/]/, '').replace(/\.ya?ml$/, '');
  const profile = applyOverrides(base, params as Record<string, unknown>, `sim profile ${file}`);
  profile.name = name;
  profile.description = typeof d.description === 'string' ? d.description.trim() : base.description;
  return profile;
}

function resolveProfilePath(nameOrFile: string): string {
  if (/[\\/]|\.ya?ml$/.test(nameOrFile)) return resolve(nameOrFile);
  const file = join(profilesDir(), `${nameOrFile}.yaml`);
  if (!existsSync(file)) {
    throw new UserError(
      `unknown sim profile '${nameOrFile}'; use one of: ${listProfiles().join(', ')} (or --profile-file FILE)`,
    );
  }
  return file;
}

/** Loads a bundled profile by name ('instant', 'h200-llama8b-bf16', ...) or a YAML file by path. */
export function loadProfile(nameOrFile: string): SimProfile {
  return validateProfile(readProfileFile(resolveProfilePath(nameOrFile), 0));
}

/**
 * Loads a bundled profile by its name only (`sim --profile`, a run's sim profile): a name that is a path
 * (`../../etc/passwd`) is refused in one line; a file of one's own goes to --profile-file.
 */
export function loadBundledProfile(name: string): SimProfile {
  if (!listProfiles().includes(name)) {
    throw new UserError(
      `unknown sim profile '${name}'; use one of: ${listProfiles().join(', ')} (or --profile-file FILE)`,
    );
  }
  return loadProfile(name);
}

/** Denoising steps a diffusion block needs at a threshold: 1 + (B - 1) * t^k, rounded, within [1, B]. */
export function denoiseSteps(blockSize: number, threshold: number, exponent: number): number {
  if (blockSize <= 1) return 1;
  const steps = Math.round(1 + (blockSize - 1) * Math.pow(threshold, exponent));
  return Math.min(blockSize, Math.max(1, steps));
}
