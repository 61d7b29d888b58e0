import type { BenchConfig, ServerConfig } from '../../shared/config.js';
import type { RunEvent } from '../../shared/events.js';
import type { RunRecord } from '../../shared/run-record.js';

// The one redaction module: every writer (run.json, server.log, events, exports, CLI output) and every
// output of the service (activeRun, events, getRun, presets) goes through these functions.

/** What replaces a secret wherever servebench writes or shows text. */
export const REDACTED = '***';

// KEY, TOKEN, SECRET, PASS(WORD), AUTH, CREDENTIAL, BEARER anywhere in the name. TOKENS and TOKENIZ-
// are counts and tokenizer settings (--max-num-batched-tokens, TOKENIZERS_PARALLELISM), not secrets.
const SECRET_WORD = /KEY|SECRET|PASS|AUTH|CREDENTIAL|BEARER|TOKEN(?!S|IZ)/i;
/** Token shapes that are secrets wherever they appear (Hugging Face, OpenAI-style keys, bearer headers). */
const SECRET_SHAPES: RegExp[] = [
  /\bhf_[A-Za-z0-9]{16,}\b/g,
  /\bsk-[A-Za-z0-9_-]{16,}\b/g,
  /(Bearer\s+)[A-Za-z0-9._~+/=-]{8,}/gi,
  /(\b(?:Basic|Token)\s+)[A-Za-z0-9._~+/=-]{12,}/g,
  // A URL's password: scheme://user:PASSWORD@host
  /(\b[a-z][a-z0-9+.-]*:\/\/[^\s:/@]*:)[^\s@/]+(?=@)/gi,
];
// `--secret-flag value`, `--secret-flag=value` in a logged command line.
const SECRET_FLAG_IN_TEXT =
  /(--?[A-Za-z0-9_-]*(?:KEY|SECRET|PASS|AUTH|CREDENTIAL|BEARER|TOKEN(?!S|IZ))[A-Za-z0-9_-]*(?:=|\s+))(?!\*\*\*)(?!-)(["']?)[^\s"']+\2/gi;
// `NAME=value`, `NAME: value`, `'name': 'value'`, `"name": ["value"]` where NAME is secret-named.
const SECRET_ASSIGNMENT =
  /(["']?)((?<![A-Za-z0-9_.-])[A-Za-z0-9_.-]*(?:KEY|SECRET|PASS|AUTH|CREDENTIAL|BEARER|TOKEN(?!S|IZ))[A-Za-z0-9_.-]*)\1(\s*[=:]\s*\[?\s*)(["']?)([^\s"',\]}]+)/gi;
/** Values too plain to be secrets: blanking every `true` or `8192` in a log would hide the log. */
const PLAIN_VALUE = /^(?:true|false|yes|no|on|off|none|null|undefined|\*\*\*|[\d.]+)$/i;

/**
 * True when an environment variable's or a flag's name says its value is secret: it contains KEY,
 * TOKEN, SECRET, PASS, AUTH, CREDENTIAL or BEARER (OPENAI_KEY, DB_PASS, HF_TOKEN, --api-key).
 */
export function isSecretName(name: string): boolean {
  return SECRET_WORD.test(name);
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

/** A URL with its password (if any) replaced. */
export function redactUrl(url: string): string {
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
  for (const argv of [config.extraArgs ?? [], config.simArgs ?? []]) for (const v of argvSecrets(argv)) values.add(v);
  const password = urlPassword(config.url);
  if (password) values.add(password);
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
  let out = line;
  for (const secret of secrets) {
    if (secret.length >= 4 && out.includes(secret)) out = out.split(secret).join(REDACTED);
  }
  for (const shape of SECRET_SHAPES) {
    out = out.replace(shape, (match, prefix?: unknown) =>
      typeof prefix === 'string' ? `${prefix}${REDACTED}` : REDACTED,
    );
  }
  out = out.replace(
    SECRET_FLAG_IN_TEXT,
    (match, prefix: string, quote: string) => `${prefix}${quote}${REDACTED}${quote}`,
  );
  out = out.replace(SECRET_ASSIGNMENT, (match, q1: string, name: string, sep: string, q2: string, value: string) =>
    PLAIN_VALUE.test(value) ? match : `${q1}${name}${q1}${sep}${q2}${REDACTED}`,
  );
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
