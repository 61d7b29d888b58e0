import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { ParseArgsConfig } from 'node:util';
import { EngineKindSchema, ServerConfigSchema } from '../shared/config.js';
import { FLASH_ATTENTION_MODES, LAUNCHABLE_ENGINES, describeEngine } from '../shared/engines.js';
import { splitCommandLine } from '../core/servers/engines/command.js';
import { UserError } from '../core/errors.js';
import { probePort } from '../core/servers/ports.js';
import { loadPreset, type ServerConfigInput } from '../core/servers/presets.js';

/** `servebench run` flags that choose and configure the server (node:util parseArgs options). */
export const serverOptions = {
  engine: { type: 'string' },
  model: { type: 'string' },
  'served-model-name': { type: 'string' },
  python: { type: 'string' },
  quantization: { type: 'string' },
  dtype: { type: 'string' },
  'kv-cache-dtype': { type: 'string' },
  tp: { type: 'string' },
  'max-model-len': { type: 'string' },
  'gpu-memory': { type: 'string' },
  'max-seqs': { type: 'string' },
  'block-size': { type: 'string' },
  threshold: { type: 'string' },
  'dllm-algorithm': { type: 'string' },
  'server-arg': { type: 'string', multiple: true },
  port: { type: 'string' },
  host: { type: 'string' },
  seed: { type: 'string' },
  env: { type: 'string', multiple: true },
  preset: { type: 'string' },
  'prefix-caching': { type: 'boolean' },
  'no-prefix-caching': { type: 'boolean' },
  'start-timeout': { type: 'string' },
  'llama-server': { type: 'string' },
  'gpu-layers': { type: 'string' },
  'ctx-size': { type: 'string' },
  threads: { type: 'string' },
  'flash-attn': { type: 'string' },
  'cont-batching': { type: 'boolean' },
  'no-cont-batching': { type: 'boolean' },
  cmd: { type: 'string' },
  health: { type: 'string' },
} as const satisfies NonNullable<ParseArgsConfig['options']>;

/** Help text for the server flags (the run command prints it with its own). */
export const SERVER_OPTIONS_HELP = `Server (launched by servebench unless --url is given):
  --engine ${LAUNCHABLE_ENGINES.join('|')}
                               engine to launch (default sim: the built-in simulator)
  --model M                    hub id (org/name) or local folder
  --served-model-name NAME     name the server answers to
  --python PATH                interpreter of the venv/conda env with the engine (default python3)
  --quantization Q             checked against the installed engine's own --help
  --dtype D  --kv-cache-dtype D
  --tp N                       tensor parallel size
  --max-model-len L            max tokens per request (SGLang --context-length)
  --gpu-memory F               GPU memory fraction 0-1 (vLLM --gpu-memory-utilization, SGLang --mem-fraction-static)
  --max-seqs N                 max concurrent sequences (vLLM --max-num-seqs, SGLang --max-running-requests)
  --prefix-caching | --no-prefix-caching
  --seed N
  --block-size B --threshold T --dllm-algorithm A   diffusion (block) decoding (defaults 32, 0.95, LowConfidence)
  --server-arg=ARG             extra engine argument, repeatable (--server-arg=--trust-remote-code)
  --env KEY=VALUE              environment for the server, repeatable (secrets never reach logs)
  --host H  --port P           bind address (default 127.0.0.1, a free port)
  --start-timeout T            readiness time-out: seconds, or 90s / 20m / 1h (default 20m)
  --preset NAME                a ready-made setup from resources/presets (flags override it)
llama.cpp (--engine llamacpp; --model is a .gguf path or a Hugging Face repo for -hf):
  --llama-server PATH          the llama-server binary (default: llama-server on PATH)
  --gpu-layers N  --ctx-size N --threads N   -ngl, -c (shared by the --max-seqs slots), -t
  --flash-attn ${FLASH_ATTENTION_MODES.join('|')}  --cont-batching | --no-cont-batching   (--kv-cache-dtype sets -ctk and -ctv)
Any server (--engine command):
  --cmd "LINE"                 its command line, split like a shell but never run by one;
                               {port}, {host} and {model} are filled in
  --health PATH                readiness path answering 200 when ready (default /health)`;

type Values = Record<string, unknown>;

function str(values: Values, flag: string): string | undefined {
  const v = values[flag];
  if (v === undefined) return undefined;
  if (typeof v !== 'string') throw new UserError(`--${flag} needs a value`);
  if (v.trim() === '') throw new UserError(`--${flag} needs a value`);
  return v.trim();
}

function list(values: Values, flag: string): string[] {
  const v = values[flag];
  if (v === undefined) return [];
  return (Array.isArray(v) ? v : [v]).map(String);
}

function int(values: Values, flag: string, min: number, max = Number.MAX_SAFE_INTEGER): number | undefined {
  const v = str(values, flag);
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!/^-?\d+$/.test(v) || !Number.isSafeInteger(n) || n < min || n > max) {
    const range =
      max === Number.MAX_SAFE_INTEGER
        ? min === 1
          ? 'a positive integer'
          : `an integer >= ${min}`
        : `an integer from ${min} to ${max}`;
    throw new UserError(`--${flag} must be ${range} (got '${v}')`);
  }
  return n;
}

/** Digits with an optional decimal point: no 1e-1, 0x1 or signs. */
const PLAIN_DECIMAL = /^(\d+(\.\d*)?|\.\d+)$/;

function fraction(values: Values, flag: string): number | undefined {
  const v = str(values, flag);
  if (v === undefined) return undefined;
  const n = PLAIN_DECIMAL.test(v) ? Number(v) : Number.NaN;
  if (!Number.isFinite(n) || n <= 0 || n > 1) throw new UserError(`--${flag} must be a number in (0, 1] (got '${v}')`);
  return n;
}

/** Parses a duration: plain seconds, or a number with ms, s, m or h. */
export function parseDurationMs(text: string, flag = 'start-timeout'): number {
  const m = text.trim().match(/^(\d+(?:\.\d+)?)\s*(ms|s|m|min|h)?$/i);
  if (!m) throw new UserError(`--${flag} must be a duration such as 600, 90s, 20m or 1h (got '${text}')`);
  const n = Number(m[1]);
  const unit = (m[2] ?? 's').toLowerCase();
  const factor = unit === 'ms' ? 1 : unit === 's' ? 1_000 : unit === 'h' ? 3_600_000 : 60_000;
  const ms = Math.round(n * factor);
  if (ms <= 0) throw new UserError(`--${flag} must be longer than zero (got '${text}')`);
  return ms;
}

function splitServerArg(arg: string): string[] {
  // "--max-num-batched-tokens 8192" in one value is two arguments; a value without a leading dash stays whole.
  return arg.startsWith('-') && /\s/.test(arg.trim()) ? arg.trim().split(/\s+/) : [arg];
}

/**
 * Builds a server config input from `servebench run` flags, over a preset when given
 * (`preset` argument, or --preset NAME loaded from resources/presets). Validates and throws a
 * UserError with one line naming the bad flag.
 */
export function serverConfigFromFlags(values: Values, preset?: ServerConfigInput): ServerConfigInput {
  const presetName = str(values, 'preset');
  const base: ServerConfigInput = preset ?? (presetName ? loadPreset(presetName) : {});
  const out: ServerConfigInput = { ...base };
  const set = <K extends keyof ServerConfigInput>(key: K, value: ServerConfigInput[K] | undefined): void => {
    if (value !== undefined) out[key] = value;
  };

  const engine = str(values, 'engine');
  if (engine !== undefined) {
    const parsed = EngineKindSchema.safeParse(engine);
    if (!parsed.success || !LAUNCHABLE_ENGINES.includes(parsed.data))
      throw new UserError(
        `--engine must be one of ${LAUNCHABLE_ENGINES.join(', ')} (got '${engine}'); use --url for a running server`,
      );
    set('engine', parsed.data);
  }
  const url = typeof values.url === 'string' ? values.url : undefined;
  if (url !== undefined) {
    if (engine !== undefined)
      throw new UserError(`--url attaches to a running server; it cannot be combined with --engine ${engine}`);
    try {
      const u = new URL(url);
      if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('scheme');
    } catch {
      throw new UserError(`--url must be an http(s) URL such as http://127.0.0.1:8000 (got '${url}')`);
    }
    set('engine', 'attach');
    set('url', url);
  }

  set('model', str(values, 'model'));
  set('servedModelName', str(values, 'served-model-name'));
  set('python', str(values, 'python'));
  set('quantization', str(values, 'quantization'));
  set('dtype', str(values, 'dtype'));
  set('kvCacheDtype', str(values, 'kv-cache-dtype'));
  set('tensorParallel', int(values, 'tp', 1));
  set('maxModelLen', int(values, 'max-model-len', 1));
  set('gpuMemoryFraction', fraction(values, 'gpu-memory'));
  set('maxSeqs', int(values, 'max-seqs', 1));
  set('port', int(values, 'port', 0, 65535));
  set('host', str(values, 'host'));
  set('seed', int(values, 'seed', 0));

  set('llamaServer', str(values, 'llama-server'));
  set('gpuLayers', int(values, 'gpu-layers', 0));
  set('contextSize', int(values, 'ctx-size', 1));
  set('threads', int(values, 'threads', 1));
  const flashAttn = str(values, 'flash-attn') as (typeof FLASH_ATTENTION_MODES)[number] | undefined;
  if (flashAttn !== undefined && !FLASH_ATTENTION_MODES.includes(flashAttn))
    throw new UserError(`--flash-attn must be ${FLASH_ATTENTION_MODES.join(', ')} (got '${flashAttn}')`);
  set('flashAttention', flashAttn);
  if (values['cont-batching'] === true && values['no-cont-batching'] === true)
    throw new UserError('--cont-batching and --no-cont-batching contradict each other; pass one');
  if (values['cont-batching'] === true) set('continuousBatching', true);
  if (values['no-cont-batching'] === true) set('continuousBatching', false);
  const cmd = str(values, 'cmd');
  if (cmd !== undefined) {
    let argv: string[];
    try {
      argv = splitCommandLine(cmd);
    } catch (error) {
      throw new UserError(`--cmd: ${(error as Error).message}`);
    }
    if (argv.length === 0) throw new UserError('--cmd needs a command line');
    set('command', argv);
  }
  const health = str(values, 'health');
  if (health !== undefined && !health.startsWith('/'))
    throw new UserError(`--health must be a path such as /health (got '${health}')`);
  set('healthPath', health);

  if (values['prefix-caching'] === true && values['no-prefix-caching'] === true) {
    throw new UserError('--prefix-caching and --no-prefix-caching contradict each other; pass one');
  }
  if (values['prefix-caching'] === true) set('prefixCaching', true);
  if (values['no-prefix-caching'] === true) set('prefixCaching', false);

  const timeout = str(values, 'start-timeout');
  if (timeout !== undefined) set('startTimeoutMs', parseDurationMs(timeout));

  const blockSize = int(values, 'block-size', 1);
  const threshold = str(values, 'threshold');
  const algorithm = str(values, 'dllm-algorithm');
  let thresholdValue: number | undefined;
  if (threshold !== undefined) {
    thresholdValue = PLAIN_DECIMAL.test(threshold) ? Number(threshold) : Number.NaN;
    if (!Number.isFinite(thresholdValue) || thresholdValue <= 0 || thresholdValue > 1) {
      throw new UserError(`--threshold must be a number in (0, 1] (got '${threshold}')`);
    }
  }
  if (blockSize !== undefined || thresholdValue !== undefined || algorithm !== undefined) {
    out.diffusion = {
      ...(base.diffusion ?? {}),
      ...(algorithm !== undefined ? { algorithm } : {}),
      ...(blockSize !== undefined ? { blockSize } : {}),
      ...(thresholdValue !== undefined ? { threshold: thresholdValue } : {}),
    };
  }

  const serverArgs = list(values, 'server-arg').flatMap(splitServerArg);
  if (serverArgs.length > 0) {
    if ((out.engine ?? 'sim') === 'sim') out.simArgs = [...(base.simArgs ?? []), ...serverArgs];
    else out.extraArgs = [...(base.extraArgs ?? []), ...serverArgs];
  }

  const envPairs = list(values, 'env');
  if (envPairs.length > 0) {
    const env: Record<string, string> = { ...(base.env ?? {}) };
    for (const pair of envPairs) {
      const eq = pair.indexOf('=');
      const key = eq > 0 ? pair.slice(0, eq) : '';
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(key)) {
        throw new UserError(`--env must be KEY=VALUE (got '${eq > 0 ? `${key}=...` : pair.replace(/=.*/, '=...')}')`);
      }
      env[key] = pair.slice(eq + 1);
    }
    out.env = env;
  }

  const engineKind = out.engine ?? 'sim';
  if (describeEngine(engineKind).requiresModel && !out.model) {
    const what =
      engineKind === 'llamacpp' ? 'a .gguf file or a Hugging Face repo' : 'a hub id like org/name or a local folder';
    throw new UserError(`--model is required with --engine ${engineKind} (${what})`);
  }
  if (engineKind === 'command' && !out.command) {
    throw new UserError('--engine command needs --cmd "server command line" (with {port} where the port goes)');
  }

  const check = ServerConfigSchema.safeParse(out);
  if (!check.success) {
    const issue = check.error.issues[0];
    const field = String(issue?.path[0] ?? '');
    throw new UserError(`${FLAG_OF[field] ?? (field || 'server config')}: ${issue?.message ?? 'invalid'}`);
  }
  return out;
}

const FLAG_OF: Record<string, string> = {
  engine: '--engine',
  url: '--url',
  model: '--model',
  servedModelName: '--served-model-name',
  host: '--host',
  port: '--port',
  python: '--python',
  dtype: '--dtype',
  quantization: '--quantization',
  kvCacheDtype: '--kv-cache-dtype',
  tensorParallel: '--tp',
  maxModelLen: '--max-model-len',
  gpuMemoryFraction: '--gpu-memory',
  maxSeqs: '--max-seqs',
  prefixCaching: '--prefix-caching',
  seed: '--seed',
  diffusion: '--block-size/--threshold/--dllm-algorithm',
  env: '--env',
  extraArgs: '--server-arg',
  simArgs: '--server-arg',
  startTimeoutMs: '--start-timeout',
  llamaServer: '--llama-server',
  gpuLayers: '--gpu-layers',
  contextSize: '--ctx-size',
  threads: '--threads',
  flashAttention: '--flash-attn',
  continuousBatching: '--cont-batching',
  command: '--cmd',
  healthPath: '--health',
};

/**
 * Checks, before a run folder exists or anything is launched, that the server's address can work: the
 * host of --url resolves, and --host is an address of this machine to bind. One line naming the fix.
 */
export async function checkServerAddress(server: { url?: string; host?: string }): Promise<void> {
  if (server.url) {
    const host = new URL(server.url).hostname.replace(/^\[|\]$/g, '');
    if (isIP(host) !== 0) return;
    try {
      await lookup(host);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? 'no address';
      throw new UserError(
        `--url ${server.url}: the host '${host}' cannot be resolved (${code}); check its spelling, or use an IP address`,
      );
    }
    return;
  }
  const host = server.host ?? '127.0.0.1';
  const check = await probePort(host, 0);
  if (check.free) return;
  if (check.code === 'ENOTFOUND' || check.code === 'EAI_AGAIN' || check.code === 'EAI_NONAME') {
    throw new UserError(
      `--host ${host} cannot be resolved (${check.code}); use an address of this machine, e.g. 127.0.0.1 (the default)`,
    );
  }
  throw new UserError(
    `--host ${host} cannot be bound (${check.code}): it is not an address of this machine; use 127.0.0.1 (the default) or 0.0.0.0`,
  );
}
