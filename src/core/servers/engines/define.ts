import type { z } from 'zod';
import { flagOf } from '../../../shared/setting.js';
import { modelProblemOf } from './common.js';
import type {
  AnyServerConfig,
  ArgContext,
  ConfigOf,
  EngineModule,
  EngineSetting,
  EngineSettings,
  LaunchContext,
  LaunchPlan,
} from './types.js';

/** A setting the engine takes as `NATIVE VALUE`. */
export function flag<S extends z.ZodType>(schema: S, native: string, extra: Partial<EngineSetting<S>> = {}) {
  return { schema, native, args: (v: unknown) => [native, String(v)], ...extra } satisfies EngineSetting<S>;
}

/** A switch the engine takes as one flag for on and/or one for off (either may be missing). */
export function toggle<S extends z.ZodType>(schema: S, on: string | undefined, off?: string) {
  const native = [on, off].filter(Boolean).join(' / ') || 'the engine default';
  return {
    schema,
    native: on && !off ? `${on} (off: not passed)` : !on && off ? `${off} when off` : native,
    args: (v: unknown) => (v === true ? (on ? [on] : []) : off ? [off] : []),
  } satisfies EngineSetting<S>;
}

/** A setting with its own mapping to arguments. */
export function mapped<S extends z.ZodType>(
  schema: S,
  native: string,
  args: (value: NonNullable<z.output<S>>, ctx: ArgContext) => readonly string[],
  extra: Partial<EngineSetting<S>> = {},
): EngineSetting<S> {
  return { schema, native, args, ...extra };
}

/** A setting the launch itself uses (the interpreter, the binary, the model argument): no argument of its own. */
export function used<S extends z.ZodType>(schema: S, native: string, extra: Partial<EngineSetting<S>> = {}) {
  return { schema, native, ...extra } satisfies EngineSetting<S>;
}

/** Every setting of a bundle (the shared launch settings) as used by the launch itself, but those it leaves out. */
export function usedAll<T extends Record<string, z.ZodType>, X extends keyof T = never>(
  bundle: T,
  native: string,
  leaveOut: readonly X[] = [],
) {
  const kept = Object.entries(bundle).filter(([k]) => !(leaveOut as readonly string[]).includes(k));
  return Object.fromEntries(kept.map(([k, s]) => [k, used(s, native)])) as {
    [K in Exclude<keyof T, X>]: EngineSetting<T[K]>;
  };
}

const isSet = (v: unknown): boolean =>
  v !== undefined && v !== null && v !== '' && !(Array.isArray(v) && v.length === 0);

/** What the engine's own command line is made of, given the mapped arguments of its set settings. */
interface CommandParts {
  command: string;
  /** The program's first arguments, before the settings' own (positional model, host and port). */
  head: readonly string[];
  /** Arguments after the settings' own and before the extra arguments (always-on flags). */
  tail?: readonly string[];
  model?: string;
  healthPath?: string;
  gpuStateFile?: string;
}

/** An engine as its module declares it; defineEngine makes the launch plan generic around `command`. */
export interface EngineDefinition<K extends string, S extends EngineSettings> extends Omit<
  EngineModule<K, S>,
  'plan' | 'launches' | 'helpRequires' | 'preRunWarnings' | 'required' | 'chosenBy' | 'probeSetting'
> {
  readonly launches?: boolean;
  readonly required?: ReadonlyArray<keyof S & string>;
  readonly chosenBy?: keyof S & string;
  readonly probeSetting?: keyof S & string;
  /** The program and its fixed arguments; may adjust the config the settings' arguments are made from. */
  command(
    config: ConfigOf<S>,
    ctx: LaunchContext,
    note: Pick<ArgContext, 'file' | 'message'> & {
      /** The model, checked against the description: given when the engine requires one, else maybe ''. */
      model: string;
    },
  ): CommandParts & { config?: ConfigOf<S> };
  helpRequires?(config: ConfigOf<S>): Array<{ flag: string; why: string }>;
  preRunWarnings?(config: ConfigOf<S>, request: { inputTokens: number; outputTokens: number }): string[];
}

/** The arguments of the set settings, in the engine's declaration order. */
function settingArgs(settings: EngineSettings, ctx: ArgContext): string[] {
  const out: string[] = [];
  for (const [key, s] of Object.entries(settings)) {
    const value = ctx.config[key];
    if (s.args && isSet(value)) out.push(...s.args(value as never, ctx));
  }
  return out;
}

/** Notes for settings given that this engine does not have: "llama.cpp ignores --tp (use ...)". */
function ignoredNotes(def: EngineDefinition<string, EngineSettings>, config: Record<string, unknown>): string[] {
  const notes: string[] = [];
  for (const [key, value] of Object.entries(config)) {
    if (key === 'engine' || key in def.settings || !isSet(value)) continue;
    const instead = def.instead?.[key];
    for (const flagName of foreignFlags(key, value))
      notes.push(`${def.description.name} ignores --${flagName}${instead ? ` (${instead})` : ''}`);
  }
  return notes;
}

/** The flags behind a key another engine declares (a section's keys: each of its set settings). */
function foreignFlags(key: string, value: unknown): string[] {
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    return Object.entries(value)
      .filter(([, v]) => isSet(v))
      .map(([k]) => flagOf(k));
  }
  return [flagOf(key)];
}

/** Makes an engine module from its declaration: the plan is its command, its settings' arguments, its extra ones. */
export function defineEngine<const K extends string, const S extends EngineSettings>(
  def: EngineDefinition<K, S>,
): EngineModule<K, S> {
  const plan = (config: Record<string, unknown>, launch: LaunchContext): LaunchPlan => {
    const files: LaunchPlan['files'] = [];
    const messages: string[] = [];
    const note = {
      file: (name: string, content: string): string => {
        const path = `${launch.runDir.replace(/\/+$/, '')}/${name}`;
        files.push({ path, content });
        return path;
      },
      message: (text: string): void => void messages.push(text),
    };
    const model = typeof config.model === 'string' ? config.model : '';
    const noModel = modelProblemOf(def.description, model);
    if (noModel) throw new Error(noModel);
    const parts = def.command(config as ConfigOf<S>, launch, { ...note, model });
    const used = (parts.config ?? config) as Record<string, unknown>;
    const args = settingArgs(def.settings, { config: used as AnyServerConfig, launch, ...note });
    const extra = Array.isArray(used.extraArgs) ? (used.extraArgs as string[]) : [];
    return {
      command: parts.command,
      args: [...parts.head, ...args, ...(parts.tail ?? []), ...extra],
      files,
      messages: [...ignoredNotes(def as never, config), ...messages],
      ...(parts.model !== undefined ? { model: parts.model } : {}),
      ...(parts.healthPath !== undefined ? { healthPath: parts.healthPath } : {}),
      ...(parts.gpuStateFile !== undefined ? { gpuStateFile: parts.gpuStateFile } : {}),
    };
  };
  return {
    ...def,
    launches: def.launches ?? true,
    plan: plan as EngineModule<K, S>['plan'],
    ...(def.helpRequires ? { helpRequires: def.helpRequires as EngineModule<K, S>['helpRequires'] } : {}),
    ...(def.preRunWarnings ? { preRunWarnings: def.preRunWarnings as EngineModule<K, S>['preRunWarnings'] } : {}),
  };
}
