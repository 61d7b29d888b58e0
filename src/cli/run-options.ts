import { resolve } from 'node:path';
import type { ParseArgsConfig } from 'node:util';
import { BenchConfigSchema } from '../shared/config.js';
import type { BenchConfig, BenchConfigInput } from '../shared/config.js';
import { FIELDS, SWEEPABLE_FIELDS, isServerField, type FieldDescriptor, type FieldGroup } from '../shared/fields.js';
import { SERVER_KEYS as SERVER_SETTING_KEYS } from '../shared/server-schema.js';
import { checkValue, expandVary, parseFieldText, setPath } from '../shared/field-values.js';
import { splitCommandLine } from '../shared/command-line.js';
import { UserError } from '../core/errors.js';
import { FileReadError, readTextFileSync } from '../core/bounded-file.js';
import { parseYamlText } from '../core/yaml-text.js';
import { applyFlags, flagOptions, sectionsHelp, type HelpSection } from './field-flags.js';
import { SERVER_FIELDS, serverConfigFromFlags, serverOptions } from './server-options.js';
import { distributedOptions } from './distributed-options.js';

/** The load, cost, telemetry and output fields. */
const BENCH_FIELDS: readonly FieldDescriptor[] = FIELDS.filter((f) => !isServerField(f));

/** `servebench run` flags for the load and the report (server flags come from server-options). */
const benchOptions = {
  ...flagOptions(BENCH_FIELDS),
  vary: { type: 'string', multiple: true },
  config: { type: 'string' },
  from: { type: 'string' },
  'trust-recorded-commands': { type: 'boolean' },
  verbose: { type: 'boolean', short: 'v' },
  help: { type: 'boolean', short: 'h' },
} satisfies NonNullable<ParseArgsConfig['options']>;

/** All `servebench run` options. */
export const runOptions = { ...serverOptions, ...benchOptions, ...distributedOptions } satisfies NonNullable<
  ParseArgsConfig['options']
>;

/** The `--vary` keys: the flags of the sweepable fields. */
export const VARY_KEYS: readonly string[] = SWEEPABLE_FIELDS.map((f) => f.flag);

const of = (group: FieldGroup): readonly FieldDescriptor[] => BENCH_FIELDS.filter((f) => f.group === group);

/** The load, cost, telemetry and output sections of `servebench run --help` and of the CLI reference. */
export const BENCH_SECTIONS: readonly HelpSection[] = [
  {
    title: 'Load',
    fields: of('load'),
    extra: [
      ['--vary KEY=V1,V2', `server sweep: restart the server for each value (${VARY_KEYS.join(', ')}), repeatable`],
    ],
  },
  { title: 'Cost', fields: of('cost') },
  { title: 'Telemetry', fields: of('telemetry') },
  {
    title: 'Output',
    fields: of('output'),
    extra: [
      ['--config FILE', 'YAML with the same fields (camelCase or flag names); flags win'],
      [
        '--from RUN_DIR',
        "re-run a run folder's recorded configuration; each layer overrides the one before: recorded < --preset < --config < flags; the new run folder goes beside the old one unless --out",
      ],
      [
        '--trust-recorded-commands',
        "--from: run the folder's recorded command, binaries, env and files without asking, even if another user or machine wrote it (else a terminal asks, and a script is refused)",
      ],
      ['-v, --verbose', "show the server's log lines"],
    ],
  },
];

export const BENCH_OPTIONS_HELP = sectionsHelp(BENCH_SECTIONS);

type Values = Record<string, unknown>;

/** --vary KEY=V1,V2 (repeatable) -> the cartesian product of server variants. */
export function parseVary(specs: string[]): Array<Record<string, unknown>> | undefined {
  if (specs.length === 0) return undefined;
  const parsed = specs.map((spec) => {
    const eq = spec.indexOf('=');
    const key = eq > 0 ? spec.slice(0, eq) : spec;
    if (eq < 0 || !VARY_KEYS.includes(key)) {
      throw new UserError(`--vary must be KEY=V1,V2 with KEY one of ${VARY_KEYS.join(', ')} (got '${spec}')`);
    }
    return { key, values: spec.slice(eq + 1).split(',') };
  });
  const result = expandVary(parsed);
  if (!result.ok) throw new UserError(`--vary ${result.error}`);
  return result.variants;
}

// A misspelt key must not silently run the default sweep. Known keys: the schema's config keys, the
// structural ones below, and every field's flag name (its value then read like the flag's).
/** Top-level config keys that are no field of their own: the server section, sweeps, and the load's seed. */
const STRUCTURAL_TOP_KEYS = ['server', 'serverVariants', 'seed', 'model', 'url'];
const topKey = (f: FieldDescriptor): string => f.path.split('.')[0] as string;
const serverKey = (f: FieldDescriptor): string => f.path.split('.')[1] as string;
/** The config keys a YAML file may use at the top level and in its server section (every engine's). */
export const TOP_KEYS = [...new Set([...BENCH_FIELDS.map(topKey), ...STRUCTURAL_TOP_KEYS])];
export const SERVER_KEYS: readonly string[] = SERVER_SETTING_KEYS;

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

function unknownField(
  key: string,
  shown: string,
  known: readonly string[],
  path: string,
  serverHint: boolean,
): UserError {
  const near = known
    .map((k) => [k, distance(key.toLowerCase(), k.toLowerCase())] as const)
    .sort((x, y) => x[1] - y[1])[0];
  const hint = serverHint
    ? ' (a server setting: put it under server:)'
    : near && near[1] <= 3
      ? ` (did you mean '${near[0]}'?)`
      : '';
  return new UserError(`--config ${path}: unknown field '${shown}'${hint}`);
}

/** A field's value from a YAML key written as its flag name: read like the flag. */
function flagKeyValue(f: FieldDescriptor, flag: string, v: unknown, path: string): unknown {
  const bad = (error: string): UserError => new UserError(`--config ${path}: ${flag} ${error}`);
  if (f.type === 'switch' || flag === f.off) {
    if (typeof v !== 'boolean') throw bad('must be true or false');
    if (flag === f.off) return v ? (f.type === 'switch' ? false : 0) : undefined;
    return v ? (f.sets ?? true) : !(f.sets ?? true);
  }
  if (f.type === 'args' || f.type === 'command') return typeof v === 'string' ? splitCommandLine(v) : v;
  if (f.type === 'env' || f.type === 'engine') return v;
  if (typeof v === 'number' && (f.type === 'int' || f.type === 'number')) {
    const checked = checkValue(f, v);
    if (!checked.ok) throw bad(checked.error);
    return checked.value;
  }
  const text = Array.isArray(v) ? v.map(String).join(',') : String(v);
  const parsed = parseFieldText(f, text);
  if (!parsed.ok) throw bad(parsed.error);
  return parsed.value;
}

/** A list field's YAML value: `"1,8"` read like its flag, a number as a list of one, a list as it is. */
function listValue(f: FieldDescriptor | undefined, key: string, v: unknown, path: string): unknown {
  if (!f || (f.type !== 'int-list' && f.type !== 'number-list')) return v;
  if (typeof v === 'number') return [v];
  if (typeof v !== 'string') return v;
  const parsed = parseFieldText(f, v);
  if (!parsed.ok) throw new UserError(`--config ${path}: ${key} ${parsed.error}`);
  return parsed.value;
}

/** Reads one section (top level or server) key by key: config keys as they are, flag names like their flags. */
function readSection(
  data: Record<string, unknown>,
  fields: readonly FieldDescriptor[],
  known: readonly string[],
  root: string,
  path: string,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(data)) {
    const key = camel(k);
    const byFlag = fields.find((f) => f.flag === k || f.off === k);
    // A flag named like a section (--slo, whose value goes to slo.targets) written with a plain value is the flag.
    const flagOverSection = byFlag !== undefined && byFlag.path !== `${root}${key}` && typeof v !== 'object';
    if (known.includes(key) && !flagOverSection) {
      out[key] = listValue(
        fields.find((f) => f.path === `${root}${key}`),
        k,
        v,
        path,
      );
    } else if (byFlag) {
      const value = flagKeyValue(byFlag, k, v, path);
      if (value !== undefined) setPath(out, byFlag.path.slice(root.length), value);
    } else {
      const shown = root ? `server.${k}` : k;
      const isServer = !root && SERVER_FIELDS.some((f) => f.flag === k || serverKey(f) === key);
      throw unknownField(key, shown, known, path, isServer);
    }
  }
  return out;
}

function camel(key: string): string {
  return key.replace(/[-_]([a-z])/g, (_, c: string) => c.toUpperCase());
}

/** A config file is small: past this it is the wrong file (or /dev/zero), not a config. */
const CONFIG_MAX_BYTES = 1024 * 1024;

/** The text of a --config file: a regular file (never a device or FIFO, which may block or never end), capped. */
function readConfigText(path: string): string {
  try {
    return readTextFileSync(path, { what: `--config ${path}`, maxBytes: CONFIG_MAX_BYTES, expected: 'a YAML file' });
  } catch (error) {
    const refusal = error instanceof FileReadError ? error.refusal : 'unreadable';
    if (refusal === 'not-regular') throw new UserError(`--config ${path} is not a regular file: pass a YAML file`);
    if (refusal === 'too-large')
      throw new UserError(`--config ${path} is larger than ${CONFIG_MAX_BYTES / 1024} KiB: not a servebench config`);
    throw new UserError(`cannot read --config ${path}: check the path`);
  }
}

/** Reads a YAML config: keys in camelCase or as flag names; `concurrency: "1,2,4"` or a list. */
export function readConfigFile(path: string): Record<string, unknown> {
  const text = readConfigText(path);
  const parsed = parseYamlText(text);
  if ('problem' in parsed) throw new UserError(`--config ${path} is not valid YAML: ${parsed.problem}`);
  const data = parsed.value;
  if (data === null || data === undefined) return {};
  if (typeof data !== 'object' || Array.isArray(data))
    throw new UserError(`--config ${path} must be a YAML mapping of fields`);
  const out = readSection(data as Record<string, unknown>, BENCH_FIELDS, TOP_KEYS, '', path);
  const server = out.server;
  if (server && typeof server === 'object' && !Array.isArray(server)) {
    out.server = readSection(server as Record<string, unknown>, SERVER_FIELDS, SERVER_KEYS, 'server.', path);
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

/** The recorded config under the config file: top-level keys and the server section's keys replaced one by one. */
function overRecord(recorded: Record<string, unknown>, file: Record<string, unknown>): Record<string, unknown> {
  const server = { ...((recorded.server as object | undefined) ?? {}), ...((file.server as object | undefined) ?? {}) };
  return { ...recorded, ...file, server };
}

/**
 * Builds the run's BenchConfig: defaults, then a recorded config (--from), then --config YAML, then flags.
 * One clear line on any problem.
 */
export function benchConfigFromFlags(
  values: Values,
  env: NodeJS.ProcessEnv = process.env,
  recorded?: Record<string, unknown>,
): BenchConfig {
  const yaml = typeof values.config === 'string' ? readConfigFile(values.config) : {};
  const file = recorded ? overRecord(recorded, yaml) : yaml;
  const input: Record<string, unknown> = { ...file };
  applyFlags(values, BENCH_FIELDS, input);
  if (values['api-key'] === undefined) {
    const fromEnv = env.SERVEBENCH_API_KEY ?? env.OPENAI_API_KEY;
    if (fromEnv) input.apiKey = fromEnv;
  }
  const vary = parseVary(Array.isArray(values.vary) ? values.vary.map(String) : []);
  if (vary) input.serverVariants = vary;

  // Server: the config file's server section (and top-level model/url), then server flags over it.
  const fileServer = { ...((file.server as Record<string, unknown> | undefined) ?? {}) };
  if (typeof file.url === 'string' && fileServer.url === undefined) {
    fileServer.url = file.url;
    fileServer.engine = 'attach';
  }
  if (typeof file.model === 'string' && fileServer.model === undefined) fileServer.model = file.model;
  // The one preset path: serverConfigFromFlags lays the file's server section, then the flags, over it.
  const server = serverConfigFromFlags(values, fileServer as never);
  input.server = server;
  if (server.model !== undefined) input.model = server.model;
  // --seed sets the prompts' seed too, also over a recorded or YAML top-level seed (flags win).
  if ((input.seed === undefined || values.seed !== undefined) && typeof server.seed === 'number')
    input.seed = server.seed;
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
  // A workload file is recorded by its full path: `run --from` reads it again from any folder.
  if (parsed.data.prompts !== undefined) parsed.data.prompts = resolve(parsed.data.prompts);
  if (parsed.data.trace !== undefined) parsed.data.trace = resolve(parsed.data.trace);
  return parsed.data;
}
