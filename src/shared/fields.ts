/**
 * Every setting of a run as a field, generated from the declarations (src/shared/setting.ts): the config schema's
 * keys for the load, cost, telemetry and output, and each engine's settings for the server. A field knows its place
 * in the config, its flag, how its value is written, the engines that have it and the app's control for it; its
 * values, bounds, choices and default stay the schema's. The CLI's flags and help, the `--vary` keys, the YAML key
 * check and the app's form are made from this list (reading and writing values is field-values.ts).
 */
import { z } from 'zod';
import { BenchConfigSchema, ENGINE_SETTING } from './config.js';
import { ENGINE_FACTS, LAUNCHABLE_ENGINES, type EngineKind } from './engines.js';
import { isSecretName } from './secret-names.js';
import { SERVER_SETTING_SCHEMAS } from './server-schema.js';
import { SERVER_SETTING_ORDER } from './server-settings.js';
import { bareSchema, kebab, settingMeta, type SettingGroup, type SettingMeta } from './setting.js';

export { bareSchema };

/** How a value is written and read. */
type FieldType =
  | 'text'
  | 'int'
  | 'number'
  | 'int-list'
  | 'number-list'
  | 'switch'
  | 'seconds'
  | 'duration'
  | 'choice'
  | 'engine'
  | 'url'
  | 'command'
  | 'args'
  | 'env';

/** The app's control for a field ('none': the app sets it elsewhere, see appSetsIt). */
type UiControl =
  'engine' | 'text' | 'secret' | 'number' | 'list' | 'select' | 'toggle' | 'percent' | 'args' | 'env' | 'none';

export type FieldGroup = SettingGroup;

/** One setting as the CLI, the YAML reader and the app's form use it. */
export interface FieldDescriptor extends Omit<SettingMeta, 'flag' | 'syntax' | 'percent'> {
  /** Where the value goes in a BenchConfig: 'rounds', 'slo.ttftMs', 'server.maxSeqs', 'server.diffusion.threshold'. */
  readonly path: string;
  /** Its one name: the `servebench run` flag (without dashes), its YAML flag-style key, --vary key and form key. */
  readonly flag: string;
  readonly type: FieldType;
  readonly ui: UiControl;
  /** The declared schema (with its optional or default wrapper): the value's one check. */
  readonly schema: z.ZodType;
  /** Whole numbers only (int, int-list). */
  readonly integer: boolean;
  /** The only values there are (an enum). */
  readonly choices?: readonly string[];
  /** Engines that have it (server fields only). */
  readonly engines?: readonly EngineKind[];
}

const SYNTAX_TYPES = {
  seconds: 'seconds',
  duration: 'duration',
  'command-line': 'command',
  args: 'args',
  env: 'env',
  engine: 'engine',
} as const satisfies Record<NonNullable<SettingMeta['syntax']>, FieldType>;

function typeOf(schema: z.ZodType, meta: SettingMeta): FieldType {
  if (meta.syntax) return SYNTAX_TYPES[meta.syntax];
  const s = bareSchema(schema);
  if (s instanceof z.ZodNumber) return s.isInt ? 'int' : 'number';
  if (s instanceof z.ZodArray) {
    const el = bareSchema(s.element as z.ZodType);
    if (el instanceof z.ZodNumber) return el.isInt ? 'int-list' : 'number-list';
    return 'args';
  }
  if (s instanceof z.ZodBoolean) return 'switch';
  if (s instanceof z.ZodEnum) return 'choice';
  if (s instanceof z.ZodURL) return 'url';
  if (s instanceof z.ZodRecord) return 'env';
  return 'text';
}

const CONTROLS: Record<FieldType, UiControl> = {
  text: 'text',
  int: 'number',
  number: 'number',
  'int-list': 'list',
  'number-list': 'list',
  switch: 'toggle',
  seconds: 'number',
  duration: 'text',
  choice: 'select',
  engine: 'engine',
  url: 'text',
  command: 'text',
  args: 'args',
  env: 'env',
};

function uiOf(type: FieldType, meta: SettingMeta, flag: string): UiControl {
  if (meta.appSetsIt) return 'none';
  if (meta.percent) return 'percent';
  const ui = CONTROLS[type];
  return ui === 'text' && isSecretName(flag) ? 'secret' : ui;
}

function describe(path: string, schema: z.ZodType, engines?: readonly EngineKind[]): FieldDescriptor {
  const meta = settingMeta(schema);
  if (!meta) throw new Error(`setting '${path}' has no declaration`);
  const { flag: declared, syntax: _syntax, percent: _percent, ...rest } = meta;
  const flag = declared ?? kebab(path.split('.').pop() as string);
  const type = typeOf(schema, meta);
  const bare = bareSchema(schema);
  const choices =
    type === 'engine' ? LAUNCHABLE_ENGINES : bare instanceof z.ZodEnum ? (bare.options as string[]) : undefined;
  return {
    ...rest,
    ...(choices && !rest.metavar ? { metavar: choices.join('|') } : {}),
    path,
    flag,
    type,
    ui: uiOf(type, meta, flag),
    schema,
    integer: type === 'int' || type === 'int-list',
    ...(choices ? { choices } : {}),
    ...(engines ? { engines } : {}),
  };
}

const haveIt = (key: string, sub?: string): EngineKind[] =>
  ENGINE_FACTS.filter((e) => {
    if (!e.settings.includes(key)) return false;
    if (sub === undefined) return true;
    return e.sectionKeys[key]?.includes(sub) === true;
  }).map((e) => e.kind);

const rank = (key: string): number => {
  const i = SERVER_SETTING_ORDER.indexOf(key);
  return i < 0 ? SERVER_SETTING_ORDER.length : i;
};

/** The server fields: the engine, then every engine's settings (shared ones first), sections' keys in place. */
function serverFields(): FieldDescriptor[] {
  const keys = [...SERVER_SETTING_SCHEMAS.keys()].map((k, i) => [k, i] as const);
  keys.sort((a, b) => rank(a[0]) - rank(b[0]) || a[1] - b[1]);
  const out: FieldDescriptor[] = [describe('server.engine', ENGINE_SETTING)];
  for (const [key] of keys) {
    const schema = SERVER_SETTING_SCHEMAS.get(key) as z.ZodType;
    const bare = bareSchema(schema);
    if (bare instanceof z.ZodObject && !settingMeta(schema)) {
      for (const [sub, s] of Object.entries(bare.shape))
        out.push(describe(`server.${key}.${sub}`, s as z.ZodType, haveIt(key, sub)));
    } else out.push(describe(`server.${key}`, schema, haveIt(key)));
  }
  return out;
}

/** The load, cost, telemetry and output fields: the declared keys of the config schema, sections' keys in place. */
function benchFields(): FieldDescriptor[] {
  const out: FieldDescriptor[] = [];
  for (const [key, schema] of Object.entries(BenchConfigSchema.shape) as Array<[string, z.ZodType]>) {
    if (key === 'server') continue;
    if (settingMeta(schema)) out.push(describe(key, schema));
    const bare = bareSchema(schema);
    if (bare instanceof z.ZodObject && !settingMeta(schema)) {
      for (const [sub, s] of Object.entries(bare.shape))
        if (settingMeta(s as z.ZodType)) out.push(describe(`${key}.${sub}`, s as z.ZodType));
    }
  }
  return out;
}

/** Every field: the server's first, then the load, cost, telemetry and output, in help and form order. */
export const FIELDS: readonly FieldDescriptor[] = [...serverFields(), ...benchFields()];

const BY_FLAG = new Map(FIELDS.map((f) => [f.flag, f]));
if (BY_FLAG.size !== FIELDS.length) throw new Error('two settings share a flag: each flag names one setting');

/** The field of a flag (its one name), or undefined. */
export const fieldByFlag = (flag: string): FieldDescriptor | undefined => BY_FLAG.get(flag);

/** Fields that configure the server (their path starts with `server.`). */
export const isServerField = (f: FieldDescriptor): boolean => f.path.startsWith('server.');

/** Whether a field is a condition of the measurement (see SettingMeta.condition). */
export const isCondition = (f: FieldDescriptor): boolean =>
  f.condition ?? (f.group === 'server' || f.group === 'diffusion');

/** The fields `--vary` can sweep; their flags are the --vary keys. */
export const SWEEPABLE_FIELDS: readonly FieldDescriptor[] = FIELDS.filter((f) => f.sweep === true);

/** Whether a server field applies to an engine. */
export const fieldApplies = (f: FieldDescriptor, engine: string): boolean =>
  f.engines === undefined || f.engines.includes(engine as EngineKind);

/** The field of a server setting's config key (`llamaServer` -> --llama-server), or undefined. */
export const fieldByServerKey = (key: string): FieldDescriptor | undefined =>
  FIELDS.find((f) => f.path === `server.${key}`);

/**
 * A message as the app shows it: written for the command line, it names settings by their flags (`pass --model`,
 * `raise --ctx-size`); the app names each by the label its form shows (`fill in Model`, `raise Context (-c)`).
 */
export function inAppWords(message: string): string {
  const label = (flag: string): string | undefined => {
    const f = BY_FLAG.get(flag) ?? FIELDS.find((x) => x.off === flag);
    return f && f.ui !== 'none' ? f.label : undefined;
  };
  // A flag's own placeholder after it (`--python PATH`) goes with it: the form's field is its place.
  const withMetavar = (flag: string, rest: string | undefined): string =>
    rest !== undefined && (BY_FLAG.get(flag)?.metavar ?? '') !== rest ? ` ${rest}` : '';
  return message
    .replace(/\bpass --([a-z][a-z0-9-]*)(?: ([A-Z]+)\b)?/g, (m, flag: string, rest?: string) =>
      label(flag) ? `fill in ${label(flag)}${withMetavar(flag, rest)}` : m,
    )
    .replace(/--([a-z][a-z0-9-]*)(?: ([A-Z]+)\b)?/g, (m, flag: string, rest?: string) =>
      label(flag) ? `${label(flag)}${withMetavar(flag, rest)}` : m,
    );
}
