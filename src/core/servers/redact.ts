import type { BenchConfig, ServerConfig } from '../../shared/config.js';
import type { RunEvent } from '../../shared/events.js';
import type { RunRecord } from '../../shared/run-record.js';
import { REDACTED, isSecretName } from '../../shared/secret-names.js';

export { REDACTED, isSecretName };

// The one redaction module: every writer (run.json, server.log, events, exports, CLI output) and every
// output of the service (activeRun, events, getRun, presets) goes through these functions.

/** Token shapes that are secrets wherever they appear (Hugging Face, OpenAI-style keys, bearer headers). */
const SECRET_SHAPES: RegExp[] = [
  /\bhf_[A-Za-z0-9]{16,}\b/g,
  /\bsk-[A-Za-z0-9_-]{16,}\b/g,
  /(Bearer\s+)[A-Za-z0-9._~+/=-]{8,}/gi,
  /(\b(?:Basic|Token)\s+)[A-Za-z0-9._~+/=-]{12,}/g,
  // A URL's password: scheme://user:PASSWORD@host
  /(\/\/[^\s:/@]*:)[^\s@/]+(?=@)/g,
];
// Server lines are untrusted: names are found word by word and values read with sticky patterns, so
// the work is linear in the line and a hostile line cannot stall the process.
/** A name-like word: `OPENAI_KEY`, `--db-pass`, `api_key`, `hf.token`. */
const NAME_WORD = /[A-Za-z0-9_.-]+/g;
/** After a secret name: `=value`, `: value`, `': ['value'`. */
const ASSIGNED_VALUE = /(\s*[=:]\s*\[?\s*)(["']?)([^\s"',\]{}[]+)/y;
/** After a secret flag: ` value` (a flag's value is the next word unless it is a flag itself). */
const FLAG_VALUE = /(\s+)(["']?)([^\s"']+)/y;
/** Values too plain to be secrets: blanking every `true` or `8192` in a log would hide the log. */
const PLAIN_VALUE = /^(?:true|false|yes|no|on|off|none|null|undefined|\*\*\*|[\d.]+)$/i;
/** A flag's value is secret even when it is a number (`--api-key 12345678`). */
const PLAIN_FLAG_VALUE = /^(?:true|false|yes|no|on|off|none|null|\*\*\*)$/i;

/** Replaces the values that follow secret names (`OPENAI_KEY=x`, `'api_key': 'x'`, `--db-pass x`) in one line. */
function redactNamedValues(line: string): string {
  let out = '';
  let copied = 0;
  for (const m of line.matchAll(NAME_WORD)) {
    const start = m.index;
    let end = start + m[0].length;
    if (start < copied || !isSecretName(m[0])) continue;
    const quote = line[start - 1];
    if ((quote === '"' || quote === "'") && line[end] === quote) end++;
    const flag = m[0].startsWith('-');
    ASSIGNED_VALUE.lastIndex = end;
    let v = ASSIGNED_VALUE.exec(line);
    if (!v && flag) {
      FLAG_VALUE.lastIndex = end;
      v = FLAG_VALUE.exec(line);
      if (v && (v[3] as string).startsWith('-')) v = null;
    }
    if (!v) continue;
    const value = v[3] as string;
    const q = v[2] as string;
    const valueStart = end + (v[1] as string).length + q.length;
    if (value === REDACTED && q && line[valueStart + value.length] === q) {
      // Already redacted, shell-quoted by the command formatter: show it bare, as the user would type it.
      out += line.slice(copied, valueStart - 1) + REDACTED;
      copied = valueStart + value.length + 1;
      continue;
    }
    if ((flag ? PLAIN_FLAG_VALUE : PLAIN_VALUE).test(value)) continue;
    out += line.slice(copied, valueStart) + REDACTED;
    copied = valueStart + value.length;
  }
  return copied === 0 ? line : out + line.slice(copied);
}

/** The flag name of an argv element that is a flag (`--api-key`, `--api-key=x` -> `--api-key`), else null. */
function flagName(arg: string): string | null {
  if (!arg.startsWith('-') || arg === '-' || arg === '--') return null;
  const eq = arg.indexOf('=');
  return eq > 0 ? arg.slice(0, eq) : arg;
}

/** Replaces the values of secret flags (`--api-key X`, `--api-key=X`, `--db-pass X`) in an argv; returns a copy. */
export function redactArgv(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = String(argv[i]);
    const name = flagName(arg);
    if (name && isSecretName(name)) {
      if (arg.includes('=')) {
        out.push(`${name}=${REDACTED}`);
        continue;
      }
      const next = argv[i + 1];
      if (next !== undefined && !String(next).startsWith('-')) {
        out.push(arg, REDACTED);
        i++;
        continue;
      }
    }
    out.push(arg);
  }
  return out;
}

/** The secret values an argv carries (values of secret-named flags). */
function argvSecrets(argv: readonly unknown[]): string[] {
  const values: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = String(argv[i]);
    const name = flagName(arg);
    if (!name || !isSecretName(name)) continue;
    if (arg.includes('=')) values.push(arg.slice(arg.indexOf('=') + 1));
    else if (argv[i + 1] !== undefined && !String(argv[i + 1]).startsWith('-')) values.push(String(argv[i + 1]));
  }
  return values;
}

function urlPassword(url: unknown): string | null {
  if (typeof url !== 'string') return null;
  try {
    const parsed = new URL(url);
    return parsed.password ? decodeURIComponent(parsed.password) : null;
  } catch {
    return null;
  }
}

/** A URL (or a --url list of replicas) with its password (if any) replaced. */
export function redactUrl(url: string): string {
  if (url.includes(',')) return url.split(',').map(redactUrl).join(',');
  try {
    const parsed = new URL(url);
    if (!parsed.password) return url;
    parsed.password = REDACTED;
    return parsed.toString();
  } catch {
    return url;
  }
}

/** The secret values a server config carries: secret-named env values, secret argv values, URL passwords. */
export function secretValues(config: Partial<ServerConfig>, env: NodeJS.ProcessEnv = {}): string[] {
  const values = new Set<string>();
  const addEnv = (record: Record<string, string | undefined>, minLength: number): void => {
    for (const [name, value] of Object.entries(record)) {
      if (value && isSecretName(name) && value.length >= minLength) values.add(value);
    }
  };
  // The parent environment is not the user's choice for this server: only token-like values, so a
  // stray FOO_AUTH=true does not blank every "true" in the log.
  addEnv(env, 8);
  addEnv(config.env ?? {}, 4);
  // Records of servebench 0.1 kept the simulator's extra arguments under simArgs.
  const older = (config as { simArgs?: string[] }).simArgs ?? [];
  for (const argv of [config.extraArgs ?? [], older, config.command ?? []]) {
    for (const v of argvSecrets(argv)) values.add(v);
  }
  for (const url of typeof config.url === 'string' ? config.url.split(',') : []) {
    const password = urlPassword(url.trim());
    if (password) values.add(password);
  }
  return [...values].filter((v) => v.length >= 4 && !PLAIN_VALUE.test(v)).sort((a, b) => b.length - a.length);
}

/** The secret values of a whole benchmark config: its API key, its servers' and variants' secrets, URL passwords. */
export function benchSecretValues(config: Partial<BenchConfig>, env: NodeJS.ProcessEnv = {}): string[] {
  const values = new Set<string>(secretValues(config.server ?? {}, env));
  if (config.apiKey) values.add(config.apiKey);
  for (const variant of config.serverVariants ?? []) {
    for (const v of secretValues(variant as Partial<ServerConfig>)) values.add(v);
  }
  const dcgm = urlPassword(config.dcgmUrl);
  if (dcgm) values.add(dcgm);
  return [...values].filter((v) => v.length >= 4 && !PLAIN_VALUE.test(v)).sort((a, b) => b.length - a.length);
}

/** Removes known secret values, secret flags, secret assignments and secret-shaped tokens from one line of text. */
export function redactLine(line: string, secrets: readonly string[] = []): string {
  return redactNamedValues(scrubSecrets(line, secrets));
}

/**
 * Removes known secret values and secret-shaped tokens, but reads no names: for text servebench rendered
 * itself from an already redacted record (exports), where its own field names are not secret names.
 */
export function scrubSecrets(text: string, secrets: readonly string[] = []): string {
  let out = text;
  for (const secret of secrets) {
    if (secret.length >= 4 && out.includes(secret)) out = out.split(secret).join(REDACTED);
  }
  for (const shape of SECRET_SHAPES) {
    out = out.replace(shape, (match, prefix?: unknown) =>
      typeof prefix === 'string' ? `${prefix}${REDACTED}` : REDACTED,
    );
  }
  return out;
}

/** A line redactor bound to one config (and the parent environment the child inherits). */
export function createRedactor(
  config: Partial<ServerConfig>,
  env: NodeJS.ProcessEnv = process.env,
): (line: string) => string {
  const secrets = secretValues(config, env);
  return (line) => redactLine(line, secrets);
}

/** Secret-named keys of a record get REDACTED values. */
function redactRecordValues(record: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(record).map(([k, v]) => [k, isSecretName(k) && v !== undefined && v !== null ? REDACTED : v]),
  );
}

/** A copy of a server config (or a variant of one) safe to log, record in run.json or export: secret env values, secret argv values, secret-named fields and URL passwords replaced. */
export function redact<T extends object>(config: T): T {
  const c = config as Record<string, unknown>;
  const out = redactRecordValues(c);
  if (c.env && typeof c.env === 'object') out.env = redactRecordValues(c.env as Record<string, unknown>);
  if (Array.isArray(c.extraArgs)) out.extraArgs = redactArgv(c.extraArgs as string[]);
  if (Array.isArray(c.simArgs)) out.simArgs = redactArgv(c.simArgs as string[]);
  // --engine command: the server's own argv carries its flags too (`--api-key X`).
  if (Array.isArray(c.command)) out.command = redactArgv(c.command as string[]);
  if (typeof c.url === 'string') out.url = redactUrl(c.url);
  return out as T;
}

/** A copy of a benchmark config safe to record, show or send to a client: API key, server and variant secrets, URL passwords replaced. */
export function redactBenchConfig<T extends object>(config: T): T {
  const c = config as Record<string, unknown>;
  const out = redactRecordValues(c);
  if (c.server && typeof c.server === 'object') out.server = redact(c.server);
  if (Array.isArray(c.serverVariants)) {
    out.serverVariants = c.serverVariants.map((v: unknown) => (v && typeof v === 'object' ? redact(v) : v));
  }
  if (typeof c.dcgmUrl === 'string') out.dcgmUrl = redactUrl(c.dcgmUrl);
  return out as T;
}

/** A copy of a run record safe to send or export: its config redacted, its command line and engine URL cleaned. */
export function redactRecord(record: RunRecord, secrets: readonly string[] = []): RunRecord {
  if (!record || typeof record !== 'object') return record;
  const config = record.config ? redactBenchConfig(record.config) : record.config;
  const engine = record.environment?.engine;
  const environment =
    engine && record.environment
      ? {
          ...record.environment,
          engine: {
            ...engine,
            ...(typeof engine.url === 'string' ? { url: redactUrl(engine.url) } : {}),
            ...(typeof engine.command === 'string' ? { command: redactLine(engine.command, secrets) } : {}),
          },
        }
      : record.environment;
  return { ...record, config, environment };
}

/** A copy of a run event safe to push to any client: log lines, messages and records cleaned of secrets. */
export function redactEvent(event: RunEvent, secrets: readonly string[] = []): RunEvent {
  switch (event.type) {
    case 'server-log':
      return { ...event, line: redactLine(event.line, secrets) };
    case 'server-state':
      return event.detail === undefined ? event : { ...event, detail: redactLine(event.detail, secrets) };
    case 'server-progress':
      return { ...event, message: redactLine(event.message, secrets) };
    case 'message':
      return { ...event, text: redactLine(event.text, secrets) };
    case 'run-finished':
      return { ...event, record: redactRecord(event.record, secrets) };
    default:
      return event;
  }
}
