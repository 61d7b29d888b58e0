import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { ParseArgsConfig } from 'node:util';
import { ServerConfigSchema } from '../shared/config.js';
import { ENGINE_FACTS, LAUNCHABLE_ENGINES, describeEngine, modelProblem, type EngineFacts } from '../shared/engines.js';
import { FIELDS, fieldByServerKey, isServerField, type FieldDescriptor } from '../shared/fields.js';
import { durationMs, getPath } from '../shared/field-values.js';
import { splitCommandLine } from '../shared/command-line.js';
import { UserError } from '../core/errors.js';
import { probePort } from '../core/servers/ports.js';
import { urlCredentialsProblem } from '../core/servers/http-probe.js';
import { replicaUrls } from '../shared/replicas.js';
import { loadPreset, type ServerConfigInput } from '../core/servers/presets.js';
import { listProfiles } from '../core/sim/profile.js';
import { applyFlags, flagOptions, flagText, sectionsHelp, type HelpSection } from './field-flags.js';

/** The server fields (the engine, the model and every engine's settings). */
export const SERVER_FIELDS: readonly FieldDescriptor[] = FIELDS.filter(isServerField);

/** `servebench run` flags that choose and configure the server (node:util parseArgs options). */
export const serverOptions = {
  ...flagOptions(SERVER_FIELDS),
  preset: { type: 'string' },
} satisfies NonNullable<ParseArgsConfig['options']>;

/** The engines chosen by a setting of their own (attach by --url) rather than --engine, with that setting's field. */
const CHOSEN_BY = ENGINE_FACTS.flatMap((e) => {
  const f = e.chosenBy ? fieldByServerKey(e.chosenBy) : undefined;
  return f ? [{ engine: e, field: f }] : [];
});

/** Settings of one engine only go in its own section; the rest are the server's. */
const ownedBy = (f: FieldDescriptor): string | undefined =>
  f.group === 'server' && f.engines?.length === 1 ? f.engines[0] : undefined;

/** --model's help: what it names for each engine (engines saying the same thing share a line). */
function modelHelp(f: FieldDescriptor): FieldDescriptor {
  const byHint = new Map<string, string[]>();
  for (const e of ENGINE_FACTS.filter((x) => f.engines?.includes(x.kind)))
    byHint.set(e.modelHint, [...(byHint.get(e.modelHint) ?? []), e.name]);
  const hints = [...byHint].map(([hint, names]) => `${names.join(', ')}: ${hint}`).join('; ');
  return { ...f, help: `${f.help}; ${hints}` };
}

const serverSection = (): FieldDescriptor[] =>
  SERVER_FIELDS.filter((f) => f.group === 'server' && ownedBy(f) === undefined).map((f) =>
    f.path === 'server.model' ? modelHelp(f) : f,
  );

/** One engine's section: its own settings; none when it has none of its own. */
function engineSection(e: EngineFacts): HelpSection | undefined {
  const own = SERVER_FIELDS.filter((f) => ownedBy(f) === e.kind);
  if (own.length === 0) return undefined;
  const chosen = CHOSEN_BY.find((c) => c.engine.kind === e.kind);
  return {
    title: `${e.name} (${chosen ? `--${chosen.field.flag} instead of --engine` : `--engine ${e.kind}`})`,
    fields: own,
  };
}

const chosenByText = CHOSEN_BY.map((c) => `--${c.field.flag}`).join(' or ');

/** The server sections of `servebench run --help` and of the CLI reference: the server's, then each engine's. */
export const SERVER_SECTIONS: readonly HelpSection[] = [
  {
    title: `Server (launched by servebench${chosenByText ? ` unless ${chosenByText} is given` : ''})`,
    fields: serverSection(),
    natives: true,
    extra: [
      [
        '--preset NAME',
        'a ready-made setup from resources/presets (--config and flags override it; with --from it overrides the recorded server)',
      ],
    ],
  },
  { title: 'Diffusion (block) decoding', fields: SERVER_FIELDS.filter((f) => f.group === 'diffusion') },
  ...ENGINE_FACTS.map(engineSection).filter((x): x is HelpSection => x !== undefined),
];

/** Help text for the server flags (the run command prints it with its own). */
export const SERVER_OPTIONS_HELP = sectionsHelp(SERVER_SECTIONS);

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

/** The engine the flags ask for: --engine, or the setting that chooses one (--url); undefined when neither. */
function chosenEngine(values: Values): string | undefined {
  const engine = flagText(values, 'engine');
  const by = CHOSEN_BY.find((c) => values[c.field.flag] !== undefined);
  if (engine !== undefined && !LAUNCHABLE_ENGINES.includes(engine as never)) {
    const others = CHOSEN_BY.map((c) => `; use --${c.field.flag} for ${c.engine.hint.replace(/^an? /, 'a ')}`).join('');
    throw new UserError(`--engine must be one of ${LAUNCHABLE_ENGINES.join(', ')} (got '${engine}')${others}`);
  }
  if (by && engine !== undefined)
    throw new UserError(`--${by.field.flag} chooses ${by.engine.name}; it cannot be combined with --engine ${engine}`);
  return by?.engine.kind ?? engine;
}

/** The flags of the settings written in their own syntax: command lines, repeatable arguments, KEY=VALUE pairs. */
function ownSyntaxFlags(values: Values, under: ServerConfigInput, out: Record<string, unknown>): void {
  for (const f of SERVER_FIELDS) {
    const key = f.path.slice('server.'.length);
    if (f.type === 'command') {
      const text = flagText(values, f.flag);
      if (text === undefined) continue;
      let argv: string[];
      try {
        argv = splitCommandLine(text);
      } catch (error) {
        throw new UserError(`--${f.flag}: ${(error as Error).message}`);
      }
      if (argv.length === 0) throw new UserError(`--${f.flag} needs a command line`);
      out[key] = argv;
    } else if (f.type === 'args') {
      const given = list(values, f.flag).flatMap(splitServerArg);
      if (given.length > 0) out[key] = [...((getPath(under, key) as string[] | undefined) ?? []), ...given];
    } else if (f.type === 'env') {
      const pairs = list(values, f.flag);
      if (pairs.length > 0) out[key] = envPairs(f.flag, pairs, (getPath(under, key) as Record<string, string>) ?? {});
    }
  }
}

function envPairs(flag: string, pairs: string[], base: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = { ...base };
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    const key = eq > 0 ? pair.slice(0, eq) : '';
    if (!ENV_NAME.test(key)) {
      throw new UserError(`--${flag} must be KEY=VALUE (got '${eq > 0 ? `${key}=...` : pair.replace(/=.*/, '=...')}')`);
    }
    env[key] = pair.slice(eq + 1);
  }
  return env;
}

/** What an engine cannot start without, in one line naming the flag; undefined when it has it all. */
function missingServerSetting(server: Record<string, unknown>): string | undefined {
  const e = describeEngine(typeof server.engine === 'string' ? server.engine : ENGINE_FACTS[0]!.kind);
  const noModel = modelProblem(e.kind, server.model as string | undefined);
  if (noModel) return noModel;
  for (const key of e.required) {
    const f = fieldByServerKey(key);
    if (server[key] !== undefined || !f) continue;
    const example = f.placeholder ? `, e.g. ${f.placeholder}` : '';
    return `--engine ${e.kind} needs --${f.flag}${f.metavar ? ` ${f.metavar}` : ''}${example}`;
  }
  return undefined;
}

/** The flag behind a server config path, for the schema's messages. */
function flagAt(path: PropertyKey[]): string {
  const dotted = `server.${path.filter((p) => typeof p === 'string').join('.')}`;
  const f = FIELDS.find((x) => x.path === dotted || dotted.startsWith(`${x.path}.`));
  return f ? `--${f.flag}` : 'server config';
}

/**
 * Builds a server config input from `servebench run` flags over `base` (a config file's server section),
 * itself over --preset NAME when given: the one place a preset is loaded. Validates and throws a
 * UserError with one line naming the bad flag.
 */
export function serverConfigFromFlags(values: Values, base: ServerConfigInput = {}): ServerConfigInput {
  const presetName = flagText(values, 'preset');
  const under: ServerConfigInput = presetName ? { ...loadPreset(presetName), ...base } : base;
  const out: Record<string, unknown> = { ...under };
  const engine = chosenEngine(values);
  if (engine !== undefined) out.engine = engine;
  applyFlags(values, SERVER_FIELDS, out, 'server.');
  if (
    out.simProfile !== undefined &&
    values['sim-profile'] !== undefined &&
    !listProfiles().includes(String(out.simProfile))
  ) {
    throw new UserError(`unknown --sim-profile '${String(out.simProfile)}'; available: ${listProfiles().join(', ')}`);
  }
  ownSyntaxFlags(values, under, out);
  const missing = missingServerSetting(out);
  if (missing) throw new UserError(missing);

  const check = ServerConfigSchema.safeParse(out);
  if (!check.success) {
    const issue = check.error.issues[0];
    throw new UserError(`${flagAt(issue?.path ?? [])}: ${issue?.message ?? 'invalid'}`);
  }
  return out as ServerConfigInput;
}

/** An environment variable's name. */
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** One --url address: no credentials, and a host that resolves; one line naming the fix. */
async function checkUrlHost(url: string): Promise<void> {
  const credentials = urlCredentialsProblem(url);
  if (credentials) throw new UserError(credentials);
  const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) !== 0) return;
  try {
    await lookup(host);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'no address';
    throw new UserError(
      `--url ${url}: the host '${host}' cannot be resolved (${code}); check its spelling, or use an IP address`,
    );
  }
}

/**
 * Checks, before a run folder exists or anything is launched, that the server's address can work: the
 * host of --url resolves, and --host is an address of this machine to bind. One line naming the fix.
 */
export async function checkServerAddress(server: { url?: string; host?: string }): Promise<void> {
  if (server.url) {
    // Several replicas: each one's host must resolve.
    for (const url of replicaUrls(server.url)) await checkUrlHost(url);
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
