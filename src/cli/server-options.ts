import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { ParseArgsConfig } from 'node:util';
import { EngineKindSchema, ServerConfigSchema } from '../shared/config.js';
import { LAUNCHABLE_ENGINES, modelProblem } from '../shared/engines.js';
import { FIELDS, isServerField, type FieldDescriptor, type FieldGroup } from '../shared/fields.js';
import { durationMs } from '../shared/field-values.js';
import { splitCommandLine } from '../shared/command-line.js';
import { UserError } from '../core/errors.js';
import { probePort } from '../core/servers/ports.js';
import { urlCredentialsProblem } from '../core/servers/http-probe.js';
import { loadPreset, type ServerConfigInput } from '../core/servers/presets.js';
import { listProfiles } from '../core/sim/profile.js';
import { applyFlags, fieldHelp, flagOptions, flagText, helpLine } from './field-flags.js';

/** The server fields of the table (the engine, the model and every engine's settings). */
export const SERVER_FIELDS: readonly FieldDescriptor[] = FIELDS.filter(isServerField);

/** `servebench run` flags that choose and configure the server (node:util parseArgs options). */
export const serverOptions = {
  ...flagOptions(SERVER_FIELDS),
  preset: { type: 'string' },
} satisfies NonNullable<ParseArgsConfig['options']>;

const section = (group: FieldGroup): string => fieldHelp(SERVER_FIELDS.filter((f) => f.group === group));

/** Help text for the server flags (the run command prints it with its own). */
export const SERVER_OPTIONS_HELP = `Server (launched by servebench unless --url is given):
${section('server')}
${helpLine('--preset NAME', 'a ready-made setup from resources/presets (--config and flags override it; with --from it overrides the recorded server)')}
Diffusion (block) decoding:
${section('diffusion')}
llama.cpp (--engine llamacpp; --model: a .gguf path or a Hugging Face repo):
${section('llamacpp')}
Any server (--engine command):
${section('command')}`;

type Values = Record<string, unknown>;

function list(values: Values, flag: string): string[] {
  const v = values[flag];
  if (v === undefined) return [];
  return (Array.isArray(v) ? v : [v]).map(String);
}

/** Parses a duration: plain seconds, or a number with ms, s, m or h. */
export function parseDurationMs(text: string, flag = 'start-timeout'): number {
  const ms = durationMs(text);
  if (ms === undefined) throw new UserError(`--${flag} must be a duration such as 600, 90s, 20m or 1h (got '${text}')`);
  if (ms <= 0) throw new UserError(`--${flag} must be longer than zero (got '${text}')`);
  return ms;
}

function splitServerArg(arg: string): string[] {
  // "--max-num-batched-tokens 8192" in one value is two arguments; a value without a leading dash stays whole.
  return arg.startsWith('-') && /\s/.test(arg.trim()) ? arg.trim().split(/\s+/) : [arg];
}

/**
 * Builds a server config input from `servebench run` flags over `base` (a config file's server section),
 * itself over --preset NAME when given: the one place a preset is loaded. Validates and throws a
 * UserError with one line naming the bad flag.
 */
export function serverConfigFromFlags(values: Values, base: ServerConfigInput = {}): ServerConfigInput {
  const presetName = flagText(values, 'preset');
  const under: ServerConfigInput = presetName ? { ...loadPreset(presetName), ...base } : base;
  const out: ServerConfigInput = { ...under };
  const set = <K extends keyof ServerConfigInput>(key: K, value: ServerConfigInput[K] | undefined): void => {
    if (value !== undefined) out[key] = value;
  };

  const engine = flagText(values, 'engine');
  if (engine !== undefined) {
    const parsed = EngineKindSchema.safeParse(engine);
    if (!parsed.success || !LAUNCHABLE_ENGINES.includes(parsed.data))
      throw new UserError(
        `--engine must be one of ${LAUNCHABLE_ENGINES.join(', ')} (got '${engine}'); use --url for a running server`,
      );
    set('engine', parsed.data);
  }
  if (values.url !== undefined && engine !== undefined)
    throw new UserError(`--url attaches to a running server; it cannot be combined with --engine ${engine}`);
  applyFlags(values, SERVER_FIELDS, out as Record<string, unknown>, 'server.');
  if (values.url !== undefined) set('engine', 'attach');
  if (out.simProfile !== undefined && values['sim-profile'] !== undefined && !listProfiles().includes(out.simProfile)) {
    throw new UserError(`unknown --sim-profile '${out.simProfile}'; available: ${listProfiles().join(', ')}`);
  }

  const cmd = flagText(values, 'cmd');
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
  if (out.healthPath !== undefined && !out.healthPath.startsWith('/'))
    throw new UserError(`--health must be a path such as /health (got '${out.healthPath}')`);

  const serverArgs = list(values, 'server-arg').flatMap(splitServerArg);
  if (serverArgs.length > 0) {
    if ((out.engine ?? 'sim') === 'sim') out.simArgs = [...(under.simArgs ?? []), ...serverArgs];
    else out.extraArgs = [...(under.extraArgs ?? []), ...serverArgs];
  }

  const envPairs = list(values, 'env');
  if (envPairs.length > 0) {
    const env: Record<string, string> = { ...(under.env ?? {}) };
    for (const pair of envPairs) {
      const eq = pair.indexOf('=');
      const key = eq > 0 ? pair.slice(0, eq) : '';
      if (!ENV_NAME.test(key)) {
        throw new UserError(`--env must be KEY=VALUE (got '${eq > 0 ? `${key}=...` : pair.replace(/=.*/, '=...')}')`);
      }
      env[key] = pair.slice(eq + 1);
    }
    out.env = env;
  }

  const engineKind = out.engine ?? 'sim';
  const noModel = modelProblem(engineKind, out.model);
  if (noModel) throw new UserError(noModel);
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

/** An environment variable's name. */
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The flag(s) behind each ServerConfig key, for zod's messages. */
const FLAG_OF: Record<string, string> = { simArgs: '--server-arg' };
for (const f of SERVER_FIELDS) {
  const key = f.path.split('.')[1] as string;
  FLAG_OF[key] = FLAG_OF[key] ? `${FLAG_OF[key]}/--${f.flag}` : `--${f.flag}`;
}

/**
 * Checks, before a run folder exists or anything is launched, that the server's address can work: the
 * host of --url resolves, and --host is an address of this machine to bind. One line naming the fix.
 */
export async function checkServerAddress(server: { url?: string; host?: string }): Promise<void> {
  if (server.url) {
    const credentials = urlCredentialsProblem(server.url);
    if (credentials) throw new UserError(credentials);
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
