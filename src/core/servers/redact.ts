import type { ServerConfig } from '../../shared/config.js';

/** What replaces a secret wherever servebench writes or shows text. */
export const REDACTED = '***';

const SECRET_NAME = /(^|_)(TOKEN|API_?KEY|ACCESS_KEY|AUTH)$|SECRET|PASSWORD|PASSWD|CREDENTIAL|PRIVATE_KEY/i;
/** argv flags whose value is a secret (vLLM/SGLang `--api-key`, and a few common spellings). */
const SECRET_FLAGS = new Set(['--api-key', '--api_key', '--hf-token', '--token', '--admin-api-key']);
/** Token shapes that are secrets wherever they appear (Hugging Face, OpenAI-style keys, bearer headers). */
const SECRET_SHAPES: RegExp[] = [
  /\bhf_[A-Za-z0-9]{16,}\b/g,
  /\bsk-[A-Za-z0-9_-]{16,}\b/g,
  /(Bearer\s+)[A-Za-z0-9._~+/=-]{8,}/gi,
  /(--api[-_]key(?:=|\s+))(?!\*\*\*)\S+/g,
];

/** True when an environment variable's name says its value is secret (HF_TOKEN, OPENAI_API_KEY, *SECRET*...). */
export function isSecretName(name: string): boolean {
  return SECRET_NAME.test(name);
}

/** Replaces the values of secret flags (`--api-key X`, `--api-key=X`) in an argv; returns a copy. */
export function redactArgv(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const eq = arg.indexOf('=');
    if (eq > 0 && SECRET_FLAGS.has(arg.slice(0, eq))) {
      out.push(`${arg.slice(0, eq)}=${REDACTED}`);
    } else if (SECRET_FLAGS.has(arg) && i + 1 < argv.length) {
      out.push(arg, REDACTED);
      i++;
    } else {
      out.push(arg);
    }
  }
  return out;
}

/** The secret values a config carries: secret-named env values and secret argv values. */
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
  for (const argv of [config.extraArgs ?? [], config.simArgs ?? []]) {
    for (let i = 0; i < argv.length; i++) {
      const arg = argv[i] as string;
      const eq = arg.indexOf('=');
      if (eq > 0 && SECRET_FLAGS.has(arg.slice(0, eq))) values.add(arg.slice(eq + 1));
      else if (SECRET_FLAGS.has(arg) && argv[i + 1]) values.add(argv[i + 1] as string);
    }
  }
  if (config.url) {
    try {
      const url = new URL(config.url);
      if (url.password) values.add(decodeURIComponent(url.password));
    } catch {
      // not a URL: nothing to hide
    }
  }
  return [...values].filter((v) => v.length > 0 && v !== REDACTED).sort((a, b) => b.length - a.length);
}

/** Removes known secret values and secret-shaped tokens from one line of text. */
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

/** A copy of a server config safe to log, record in run.json or export: secret env values, secret argv values and URL passwords replaced. */
export function redact<T extends Partial<ServerConfig>>(config: T): T {
  const out: T = { ...config };
  if (config.env) {
    out.env = Object.fromEntries(Object.entries(config.env).map(([k, v]) => [k, isSecretName(k) ? REDACTED : v]));
  }
  if (config.extraArgs) out.extraArgs = redactArgv(config.extraArgs);
  if (config.simArgs) out.simArgs = redactArgv(config.simArgs);
  if (config.url) {
    try {
      const url = new URL(config.url);
      if (url.password || url.username) {
        if (url.password) url.password = REDACTED;
        out.url = url.toString();
      }
    } catch {
      // leave as is
    }
  }
  return out;
}
