import { closeSync, openSync, readSync, statSync } from 'node:fs';
import type { ParseArgsConfig } from 'node:util';
import { parse as parseYaml } from 'yaml';
import { BenchConfigSchema, LIMITS, ServerConfigSchema } from '../shared/config.js';
import type { BenchConfig, BenchConfigInput } from '../shared/config.js';
import { UserError } from '../core/errors.js';
import { listProfiles } from '../core/sim/profile.js';
import { loadPreset } from '../core/servers/presets.js';
import { serverConfigFromFlags, serverOptions } from './server-options.js';

/** `servebench run` flags for the load and the report (server flags come from server-options). */
export const benchOptions = {
  url: { type: 'string' },
  api: { type: 'string' },
  'api-key': { type: 'string' },
  concurrency: { type: 'string' },
  'input-len': { type: 'string' },
  'output-len': { type: 'string' },
  rounds: { type: 'string' },
  'requests-per-round': { type: 'string' },
  warmup: { type: 'string' },
  'no-warmup': { type: 'boolean' },
  rate: { type: 'string' },
  'max-concurrency': { type: 'string' },
  timeout: { type: 'string' },
  'gpu-price-per-hour': { type: 'string' },
  utilization: { type: 'string' },
  'slo-ttft-ms': { type: 'string' },
  'slo-tpot-ms': { type: 'string' },
  'slo-e2e-ms': { type: 'string' },
  'no-unique-prefix': { type: 'boolean' },
  'allow-eos': { type: 'boolean' },
  temperature: { type: 'string' },
  'client-workers': { type: 'string' },
  'telemetry-interval': { type: 'string' },
  'nvidia-smi': { type: 'string' },
  'dcgm-url': { type: 'string' },
  'cool-down-to': { type: 'string' },
  vary: { type: 'string', multiple: true },
  'sim-profile': { type: 'string' },
  out: { type: 'string' },
  label: { type: 'string' },
  config: { type: 'string' },
  verbose: { type: 'boolean', short: 'v' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies NonNullable<ParseArgsConfig['options']>;

/** All `servebench run` options. */
export const runOptions = { ...serverOptions, ...benchOptions } as const;

export const BENCH_OPTIONS_HELP = `Load:
  --url URL                    benchmark a server that is already running (no launch); without it
                               servebench launches --engine (default: the built-in simulator)
  --api chat|completions       endpoint to load (default chat)
  --api-key KEY                bearer token (or env SERVEBENCH_API_KEY / OPENAI_API_KEY); never written to disk
  --concurrency 1,2,4,8,16     closed-loop levels: exactly C requests in flight
  --rate 2,4,8                 open-loop levels instead: Poisson arrivals (req/s); --max-concurrency caps in-flight
  --input-len 512[,2048]       prompt tokens, exact (calibrated with the server's tokenizer)
  --output-len 256[,1024]      output tokens, forced with max_tokens = min_tokens and ignore_eos
  --rounds 3                   rounds per level (spread over 15 % fails a check)
  --requests-per-round N       default max(8, 4 x concurrency)
  --warmup N | --no-warmup     warm-up requests per level, discarded (default = concurrency)
  --timeout S                  per-request time-out in seconds (default 300)
  --no-unique-prefix           same prompt for all requests: measures the prefix-cached case
  --allow-eos                  let the model stop early (no ignore_eos)
  --temperature T              sampling temperature (default 0)
  --slo-ttft-ms, --slo-tpot-ms, --slo-e2e-ms   service-level objectives: goodput = share meeting all
  --sim-profile NAME           simulator profile (resources/sim-profiles: h200-llama8b-bf16, rtx4080-llama8b-int4,
                               h200-dllm-block, thermal-throttle-demo, power-capped, instant)
  --vary KEY=V1,V2             server sweep: restart the server for each value (threshold, block-size,
                               quantization, dtype, kv-cache-dtype, max-seqs, gpu-memory, max-model-len, tp), repeatable
Cost:
  --gpu-price-per-hour USD     price of the GPU(s); gives cost per 1M output tokens
  --utilization U              average utilisation (0-1] to discount the peak cost by
Telemetry:
  --telemetry-interval MS      nvidia-smi sampling interval (default 500)
  --nvidia-smi PATH            nvidia-smi to use (or env SERVEBENCH_NVIDIA_SMI)
  --dcgm-url URL               DCGM exporter of a remote GPU (attach mode)
  --cool-down-to C             before each level wait until the GPU is idle and at or below C degrees
  --client-workers N           load-generator worker threads (default: 0; cores/4, at most 4, when a level
                               reaches 128 concurrent requests on a machine with 8 or more cores)
Output:
  --out DIR                    parent folder of run folders (default ./runs)
  --label NAME                 run label (part of the folder name)
  --config FILE                YAML with the same fields (camelCase or flag names); flags win
  -v, --verbose                show the server's log lines`;

type Values = Record<string, unknown>;

const INTEGER = /^\d+$/;
const DECIMAL = /^(\d+(\.\d*)?|\.\d+)$/;

/** A number written plainly: digits (and a decimal point when allowed); no 1e3, 0x10, Infinity or signs. */
function strictNumber(text: string, integer: boolean): number {
  return (integer ? INTEGER : DECIMAL).test(text) ? Number(text) : Number.NaN;
}

/** Limit of a flag, when it has one: the flag's bound and why. */
const FLAG_LIMIT: Record<string, keyof typeof LIMITS> = {
  concurrency: 'concurrency',
  'max-concurrency': 'concurrency',
  rate: 'rate',
  'input-len': 'tokens',
  'output-len': 'tokens',
  rounds: 'rounds',
  'requests-per-round': 'requestsPerRound',
  warmup: 'warmup',
  'client-workers': 'clientWorkers',
  'telemetry-interval': 'telemetryIntervalMs',
};

function checkLimit(n: number, flag: string, text: string): void {
  const key = FLAG_LIMIT[flag];
  if (!key || n <= LIMITS[key].max) return;
  throw new UserError(
    `--${flag} ${text} is too large: at most ${LIMITS[key].max.toLocaleString('en-US')} (${LIMITS[key].why})`,
  );
}

function numberList(text: string, flag: string, integer: boolean): number[] {
  const parts = text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  const nums = parts.map((p) => strictNumber(p, integer));
  if (parts.length === 0 || nums.some((n) => !Number.isFinite(n) || n <= 0 || (integer && !Number.isSafeInteger(n)))) {
    throw new UserError(
      `--${flag} must be a comma-separated list of positive ${integer ? 'integers' : 'numbers'} written plainly (got '${text}')`,
    );
  }
  nums.forEach((n, i) => checkLimit(n, flag, parts[i] as string));
  return nums;
}

function positive(text: string, flag: string, integer: boolean, allowZero = false): number {
  const n = strictNumber(text, integer);
  if (!Number.isFinite(n) || n < 0 || (!allowZero && n === 0) || (integer && !Number.isSafeInteger(n))) {
    throw new UserError(
      `--${flag} must be a ${allowZero ? 'non-negative' : 'positive'} ${integer ? 'integer' : 'number'} written plainly (got '${text}')`,
    );
  }
  checkLimit(n, flag, text);
  return n;
}

const VARY_KEYS: Record<string, (v: string) => Record<string, unknown>> = {
  threshold: (v) => ({ diffusion: { threshold: Number(v) } }),
  'block-size': (v) => ({ diffusion: { blockSize: Number(v) } }),
  quantization: (v) => ({ quantization: v }),
  dtype: (v) => ({ dtype: v }),
  'kv-cache-dtype': (v) => ({ kvCacheDtype: v }),
  'max-seqs': (v) => ({ maxSeqs: Number(v) }),
  'gpu-memory': (v) => ({ gpuMemoryFraction: Number(v) }),
  'max-model-len': (v) => ({ maxModelLen: Number(v) }),
  tp: (v) => ({ tensorParallel: Number(v) }),
};

function mergeDeep(a: Record<string, unknown>, b: Record<string, unknown>): Record<string, unknown> {
  const out = { ...a };
  for (const [k, v] of Object.entries(b)) {
    const cur = out[k];
    out[k] =
      v && typeof v === 'object' && cur && typeof cur === 'object' ? { ...(cur as object), ...(v as object) } : v;
  }
  return out;
}

/** --vary KEY=V1,V2 (repeatable) -> the cartesian product of server variants. */
export function parseVary(specs: string[]): Array<Record<string, unknown>> | undefined {
  if (specs.length === 0) return undefined;
  let variants: Array<Record<string, unknown>> = [{}];
  for (const spec of specs) {
    const eq = spec.indexOf('=');
    const key = eq > 0 ? spec.slice(0, eq) : spec;
    const make = VARY_KEYS[key];
    if (!make || eq < 0) {
      throw new UserError(
        `--vary must be KEY=V1,V2 with KEY one of ${Object.keys(VARY_KEYS).join(', ')} (got '${spec}')`,
      );
    }
    const values = spec
      .slice(eq + 1)
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    if (values.length === 0) throw new UserError(`--vary ${key}= needs at least one value`);
    variants = variants.flatMap((v) => values.map((value) => mergeDeep(v, make(value))));
  }
  return variants;
}

// A misspelt key must not silently run the default sweep.
const TOP_KEYS = [...Object.keys(BenchConfigSchema.shape), 'url'];
const SERVER_KEYS = Object.keys(ServerConfigSchema.shape);

function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0] as number;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const cur = row[j] as number;
      row[j] = Math.min(cur + 1, (row[j - 1] as number) + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = cur;
    }
  }
  return row[b.length] as number;
}

function checkKnown(key: string, shown: string, known: string[], path: string): void {
  if (known.includes(key)) return;
  const near = known
    .map((k) => [k, distance(key.toLowerCase(), k.toLowerCase())] as const)
    .sort((x, y) => x[1] - y[1])[0];
  const hint = near && near[1] <= 3 ? ` (did you mean '${near[0]}'?)` : '';
  throw new UserError(`--config ${path}: unknown field '${shown}'${hint}`);
}

function camel(key: string): string {
  return key.replace(/[-_]([a-z])/g, (_, c: string) => c.toUpperCase());
}

/** A config file is small: past this it is the wrong file (or /dev/zero), not a config. */
export const CONFIG_MAX_BYTES = 1024 * 1024;

/** The text of a --config file: a regular file (never a device or FIFO, which may block or never end), capped. */
function readConfigText(path: string): string {
  let fd: number;
  try {
    // stat first: opening a FIFO would block until a writer comes.
    if (!statSync(path).isFile()) throw new UserError(`--config ${path} is not a regular file: pass a YAML file`);
    fd = openSync(path, 'r');
  } catch (error) {
    if (error instanceof UserError) throw error;
    throw new UserError(`cannot read --config ${path}: check the path`);
  }
  try {
    const buffer = Buffer.alloc(CONFIG_MAX_BYTES + 1);
    let size = 0;
    for (;;) {
      const n = readSync(fd, buffer, size, buffer.length - size, null);
      if (n === 0) break;
      size += n;
      if (size > CONFIG_MAX_BYTES) {
        throw new UserError(`--config ${path} is larger than ${CONFIG_MAX_BYTES / 1024} KiB: not a servebench config`);
      }
    }
    return buffer.toString('utf8', 0, size);
  } catch (error) {
    if (error instanceof UserError) throw error;
    throw new UserError(`cannot read --config ${path}: check the path`);
  } finally {
    closeSync(fd);
  }
}

/** Reads a YAML config: keys in camelCase or as flag names; `concurrency: "1,2,4"` or a list. */
export function readConfigFile(path: string): Record<string, unknown> {
  const text = readConfigText(path);
  let data: unknown;
  try {
    data = parseYaml(text);
  } catch (error) {
    throw new UserError(`--config ${path} is not valid YAML: ${(error as Error).message.split('\n')[0]}`);
  }
  if (data === null || data === undefined) return {};
  if (typeof data !== 'object' || Array.isArray(data))
    throw new UserError(`--config ${path} must be a YAML mapping of fields`);
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(data as Record<string, unknown>)) {
    const key = camel(k);
    checkKnown(key, k, TOP_KEYS, path);
    if (key === 'server' && v && typeof v === 'object' && !Array.isArray(v)) {
      for (const sk of Object.keys(v)) checkKnown(camel(sk), `server.${sk}`, SERVER_KEYS, path);
    }
    if (['concurrency', 'inputLen', 'outputLen', 'rate'].includes(key)) {
      out[key] = typeof v === 'string' ? numberList(v, k, key !== 'rate') : typeof v === 'number' ? [v] : v;
    } else {
      out[key] = v;
    }
  }
  return out;
}

function formatZodPath(path: PropertyKey[]): string {
  // 'concurrency.2' names the list, not its third element: the message says which bound.
  return path
    .filter((p) => typeof p !== 'number')
    .map(String)
    .join('.');
}

/** Builds the run's BenchConfig: defaults, then --config YAML, then flags. One clear line on any problem. */
export function benchConfigFromFlags(values: Values, env: NodeJS.ProcessEnv = process.env): BenchConfig {
  const file = typeof values.config === 'string' ? readConfigFile(values.config) : {};
  const input: Record<string, unknown> = { ...file };
  const s = (flag: string): string | undefined => {
    const v = values[flag];
    if (v === undefined) return undefined;
    if (typeof v !== 'string' || v.trim() === '') throw new UserError(`--${flag} needs a value`);
    return v.trim();
  };
  const api = s('api');
  if (api !== undefined) {
    if (api !== 'chat' && api !== 'completions')
      throw new UserError(`--api must be chat or completions (got '${api}')`);
    input.api = api;
  }
  const lists: Array<[string, string, boolean]> = [
    ['concurrency', 'concurrency', true],
    ['input-len', 'inputLen', true],
    ['output-len', 'outputLen', true],
    ['rate', 'rate', false],
  ];
  for (const [flag, key, integer] of lists) {
    const v = s(flag);
    if (v !== undefined) input[key] = numberList(v, flag, integer);
  }
  const ints: Array<[string, string, boolean]> = [
    ['rounds', 'rounds', false],
    ['requests-per-round', 'requestsPerRound', false],
    ['warmup', 'warmup', true],
    ['max-concurrency', 'maxConcurrency', false],
    ['client-workers', 'clientWorkers', true],
    ['telemetry-interval', 'telemetryIntervalMs', false],
  ];
  for (const [flag, key, zero] of ints) {
    const v = s(flag);
    if (v !== undefined) input[key] = positive(v, flag, true, zero);
  }
  if (values['no-warmup'] === true) input.warmup = 0;
  const timeout = s('timeout');
  if (timeout !== undefined) {
    const seconds = positive(timeout, 'timeout', false);
    if (seconds * 1000 > LIMITS.timeoutMs.max)
      throw new UserError(
        `--timeout ${timeout} is too large: at most ${LIMITS.timeoutMs.max / 1000} s (${LIMITS.timeoutMs.why})`,
      );
    input.timeoutMs = Math.max(1, Math.round(seconds * 1000));
  }
  const price = s('gpu-price-per-hour');
  if (price !== undefined) input.gpuPricePerHour = positive(price, 'gpu-price-per-hour', false);
  const util = s('utilization');
  if (util !== undefined) {
    const u = positive(util, 'utilization', false);
    if (u > 1) throw new UserError(`--utilization is a fraction in (0, 1], e.g. 0.6 (got '${util}')`);
    input.utilization = u;
  }
  const temperature = s('temperature');
  if (temperature !== undefined) input.temperature = positive(temperature, 'temperature', false, true);
  const cool = s('cool-down-to');
  if (cool !== undefined) input.coolDownToC = positive(cool, 'cool-down-to', false);
  const slo: Record<string, number> = { ...((file.slo as Record<string, number> | undefined) ?? {}) };
  for (const [flag, key] of [
    ['slo-ttft-ms', 'ttftMs'],
    ['slo-tpot-ms', 'tpotMs'],
    ['slo-e2e-ms', 'e2eMs'],
  ] as const) {
    const v = s(flag);
    if (v !== undefined) slo[key] = positive(v, flag, false);
  }
  if (Object.keys(slo).length > 0) input.slo = slo;
  if (values['no-unique-prefix'] === true) input.uniquePrefix = false;
  if (values['allow-eos'] === true) input.ignoreEos = false;
  for (const [flag, key] of [
    ['out', 'out'],
    ['label', 'label'],
    ['nvidia-smi', 'nvidiaSmi'],
    ['dcgm-url', 'dcgmUrl'],
  ] as const) {
    const v = s(flag);
    if (v !== undefined) input[key] = v;
  }
  const apiKey = s('api-key') ?? env.SERVEBENCH_API_KEY ?? env.OPENAI_API_KEY;
  if (apiKey) input.apiKey = apiKey;
  const vary = parseVary(Array.isArray(values.vary) ? values.vary.map(String) : []);
  if (vary) input.serverVariants = vary;

  // Server: the config file's server section (and top-level model/url), then server flags over it.
  const fileServer = { ...((file.server as Record<string, unknown> | undefined) ?? {}) };
  if (typeof file.url === 'string' && fileServer.url === undefined) {
    fileServer.url = file.url;
    fileServer.engine = 'attach';
  }
  if (typeof file.model === 'string' && fileServer.model === undefined) fileServer.model = file.model;
  const simProfile = s('sim-profile');
  if (simProfile !== undefined) fileServer.simProfile = simProfile;
  if (simProfile !== undefined && !listProfiles().includes(simProfile)) {
    throw new UserError(`unknown --sim-profile '${simProfile}'; available: ${listProfiles().join(', ')}`);
  }
  // A preset is the base; the config file's server section, then flags, go over it.
  const presetName = typeof values.preset === 'string' ? values.preset : undefined;
  const base = presetName ? { ...loadPreset(presetName), ...fileServer } : fileServer;
  const server = serverConfigFromFlags({ ...values, preset: undefined }, base as never);
  input.server = server;
  if (server.model !== undefined) input.model = server.model;
  if (input.seed === undefined && typeof server.seed === 'number') input.seed = server.seed;
  delete input.url;

  const parsed = BenchConfigSchema.safeParse(input as BenchConfigInput);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue ? formatZodPath(issue.path) : '';
    throw new UserError(`invalid setting ${where ? `'${where}'` : ''}: ${issue?.message ?? 'invalid config'}`);
  }
  if (parsed.data.rate && parsed.data.rate.length > 0 && values.concurrency !== undefined) {
    throw new UserError(
      '--rate runs open-loop levels; use --max-concurrency (not --concurrency) to cap requests in flight',
    );
  }
  return parsed.data;
}
