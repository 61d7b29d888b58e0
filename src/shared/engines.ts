/**
 * The engines as the app, the CLI and the config see them, read from their modules' declarations (the registry,
 * src/core/servers/engines/registry.ts): id, name, hint, what --model names, how to install, and what it can do.
 * Nothing outside the engine modules names an engine: it asks these properties.
 */
import type { z } from 'zod';
import { ENGINES } from '../core/servers/engines/registry.js';
import { modelProblemOf } from '../core/servers/engines/common.js';
import { sectionKeys } from './setting.js';
import type { EngineDescription } from '../core/servers/engines/types.js';
import { ENGINE_KINDS, DEFAULT_ENGINE, type EngineKind } from './server-schema.js';

export { ENGINE_KINDS, DEFAULT_ENGINE, type EngineKind };

/** What the app and the CLI know of an engine: its description and the properties it declares. */
export interface EngineFacts extends EngineDescription {
  readonly kind: EngineKind;
  /** False: nothing is launched (a server someone else runs). */
  readonly launches: boolean;
  /** The setting that chooses it when given (its config key), instead of --engine. */
  readonly chosenBy?: string;
  readonly simulated: boolean;
  /** Its settings' config keys, in its command line's order. */
  readonly settings: readonly string[];
  /** Settings it cannot start without (config keys), the model aside. */
  readonly required: readonly string[];
  /** Values suggested per setting (config key) with this engine. */
  readonly suggest: Readonly<Record<string, readonly string[]>>;
  /** The engine's own name of each setting (config key -> its flag, or what the launch does with it). */
  readonly native: Readonly<Record<string, string>>;
  /** The settings it passes as arguments of its own (the rest the launch itself uses). */
  readonly passes: readonly string[];
  /** The setting naming the interpreter or binary servebench looks the engine up with. */
  readonly probeSetting?: string;
  /** Of each section setting it has (diffusion), the keys it has. */
  readonly sectionKeys: Readonly<Record<string, readonly string[]>>;
}

function factsOf(e: (typeof ENGINES)[number]): EngineFacts {
  const settings = e.settings as Record<
    string,
    { native: string; suggest?: readonly string[]; schema: z.ZodType; args?: unknown }
  >;
  const module = e as unknown as {
    chosenBy?: string;
    required?: readonly string[];
    simulated?: boolean;
    probeSetting?: string;
  };
  return {
    kind: e.kind,
    ...e.description,
    launches: e.launches,
    ...(module.chosenBy ? { chosenBy: module.chosenBy } : {}),
    simulated: module.simulated === true,
    settings: Object.keys(settings),
    required: module.required ?? [],
    suggest: Object.fromEntries(
      Object.entries(settings).flatMap(([k, s]) => (s.suggest ? [[k, s.suggest] as const] : [])),
    ),
    native: Object.fromEntries(Object.entries(settings).map(([k, s]) => [k, s.native])),
    passes: Object.keys(settings).filter((k) => settings[k]?.args !== undefined),
    ...(module.probeSetting ? { probeSetting: module.probeSetting } : {}),
    sectionKeys: Object.fromEntries(
      Object.entries(settings).flatMap(([k, s]) => {
        const keys = sectionKeys(s.schema);
        return keys ? [[k, keys] as const] : [];
      }),
    ),
  };
}

/** Every engine, in registry order. */
export const ENGINE_FACTS: readonly EngineFacts[] = ENGINES.map(factsOf);

/** The facts of one engine. */
export function describeEngine(kind: string): EngineFacts {
  const found = ENGINE_FACTS.find((d) => d.kind === kind);
  if (!found) throw new Error(`unknown engine '${kind}'`);
  return found;
}

/** The engines `--engine` accepts (one chosen by a setting, such as attach by --url, is not among them). */
export const LAUNCHABLE_ENGINES: readonly EngineKind[] = ENGINE_FACTS.filter((d) => !d.chosenBy).map((d) => d.kind);

/** The one check of "model required" (CLI, app form, launcher): the line to show, or undefined when fine. */
export function modelProblem(kind: string, model: string | undefined): string | undefined {
  return modelProblemOf(describeEngine(kind), model);
}

/** Whether an engine has a setting (its config key). */
export const engineHas = (kind: string, key: string): boolean => describeEngine(kind).settings.includes(key);
