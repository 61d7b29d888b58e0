/**
 * How a setting is declared: a zod schema (its values, bounds, choices and default, stated once) registered with
 * its flag, label, help and place. Everything else about a setting (the field list, the CLI flags and help,
 * `--vary` keys, YAML keys, the app's form, the messages) is generated from these declarations.
 */
import { z } from 'zod';

/** Where a setting is shown: its help section and the app's card. */
export type SettingGroup = 'server' | 'diffusion' | 'load' | 'cost' | 'telemetry' | 'output';

/** How a value is written when the schema alone does not say it (a number of seconds stored in ms, a command line). */
type SettingSyntax = 'seconds' | 'duration' | 'command-line' | 'args' | 'env' | 'engine';

/**
 * What a setting's value can name that a run folder from someone else must not set unasked: a command line, a
 * program (binary or interpreter), the server's arguments or environment (PATH, LD_PRELOAD, PYTHONPATH decide what
 * loads), a file whose text is sent. In the order `run --from` lists them.
 */
export const TRUST_KINDS = ['command', 'program', 'args', 'env', 'file'] as const;
export type TrustKind = (typeof TRUST_KINDS)[number];

/** What a setting declares beside its schema. */
export interface SettingMeta {
  /** The `servebench run` flag, without dashes; default: the config key in kebab case. Also its YAML and --vary key. */
  readonly flag?: string;
  /** The app's label. */
  readonly label: string;
  /** One line for the help, the docs and the form's tooltip. */
  readonly help: string;
  /** Placeholder of the flag's value in the help. */
  readonly metavar?: string;
  readonly unit?: string;
  readonly group: SettingGroup;
  /** The app shows it under "More settings" (seldom changed). */
  readonly advanced?: boolean;
  /** `--vary KEY=...` can sweep it (the server restarts per value). */
  readonly sweep?: boolean;
  readonly syntax?: SettingSyntax;
  /** The app edits a fraction as a percentage. */
  readonly percent?: boolean;
  /** Where the app sets it instead of the new-run form (the runs folder is an app setting). */
  readonly appSetsIt?: string;
  /** A switch's flag sets this value (default true), e.g. --allow-eos sets ignoreEos false. */
  readonly sets?: boolean;
  /** A second flag that turns the setting off: false for a switch, 0 for an int. */
  readonly off?: string;
  /** The app's placeholder when empty. */
  readonly placeholder?: string;
  /** The app's form starts with the schema default filled in (else empty, meaning the default). */
  readonly prefill?: boolean;
  /** Belongs to the engine it was given for: a run re-run on another engine does not inherit it. */
  readonly engineBound?: boolean;
  /**
   * Part of the conditions a measurement was taken under: compare names it where two runs differ, and calls them
   * like for like only when none does. Default: server and diffusion settings are, the others are not; a server
   * setting that only says how servebench reaches the server (host, port, a binary's path, a time-out) is declared
   * false, a load setting that shapes the requests (endpoint, temperature, prompt file) true.
   */
  readonly condition?: boolean;
  /**
   * It decides what runs or what is sent: a run folder from someone else that sets it is shown and asked about
   * before `run --from` runs it (src/core/runs/recorded-commands.ts), unless it holds the default.
   */
  readonly trust?: TrustKind;
  /** A comma-separated list whose flag may also be given once per item (`--dcgm-url A --dcgm-url B` is `A,B`). */
  readonly repeatJoins?: boolean;
}

/** The declarations: schema -> what it declares. */
const SETTINGS = z.registry<SettingMeta>();

/** Declares a setting: its schema (optional or with a default, as the config holds it) and its metadata. */
export function setting<T extends z.ZodType>(schema: T, meta: SettingMeta): T {
  SETTINGS.add(schema as z.ZodType, meta);
  return schema;
}

/** The metadata of a declared setting, or undefined. */
export function settingMeta(schema: z.ZodType): SettingMeta | undefined {
  return SETTINGS.get(schema);
}

/** A bound whose reason is part of the message (`at most 4,096: ...`): max and why, found again from the message. */
export interface Limit {
  readonly max: number;
  readonly why: string;
  /** How the bound reads (7 days), when not as a number. */
  readonly shown?: string;
}

const LIMITS_BY_MESSAGE = new Map<string, Limit>();

/** The check arguments of an upper bound with its reason: `.max(...atMost(4096, 'why'))`. */
export function atMost(max: number, why: string, shown?: string): [number, string] {
  const message = `at most ${shown ?? max.toLocaleString('en-US')}: ${why}`;
  LIMITS_BY_MESSAGE.set(message, { max, why, ...(shown ? { shown } : {}) });
  return [max, message];
}

/** The limit a zod message came from (see atMost), or undefined. */
export function limitOf(message: string): Limit | undefined {
  return LIMITS_BY_MESSAGE.get(message);
}

/** The reasoned limit at a bound (see atMost), or undefined. */
export function limitAt(max: number): Limit | undefined {
  return [...LIMITS_BY_MESSAGE.values()].find((l) => l.max === max);
}

/** A config key in kebab case: the flag of a setting that declares none (`gpuLayers` -> `gpu-layers`). */
export const kebab = (key: string): string => key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

const FLAG_BY_KEY = new Map<string, string>();

/** The flag of a declared setting under its config key (indexed by the config schema as it is built). */
export function declaredFlag(key: string, schema: z.ZodType): string {
  const flag = settingMeta(schema)?.flag ?? kebab(key);
  FLAG_BY_KEY.set(key, flag);
  return flag;
}

/** The flag of a config key (a server setting's key, e.g. `tensorParallel` -> `tp`). */
export function flagOf(key: string): string {
  return FLAG_BY_KEY.get(key) ?? kebab(key);
}

/** A schema without its optional, default and prefault wrappers (what its values are). */
export function bareSchema(schema: z.ZodType): z.ZodType {
  let s: z.ZodType = schema;
  while (s instanceof z.ZodDefault || s instanceof z.ZodOptional || s instanceof z.ZodPrefault)
    s = s.unwrap() as z.ZodType;
  return s;
}

/** The keys of a section setting (an object of settings, such as diffusion), or undefined for a plain setting. */
export function sectionKeys(schema: z.ZodType): string[] | undefined {
  const s = bareSchema(schema);
  return s instanceof z.ZodObject && !settingMeta(schema) ? Object.keys(s.shape) : undefined;
}
