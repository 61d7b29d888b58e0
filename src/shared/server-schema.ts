/**
 * The server configuration: a union on `engine` of the engines' own settings, made from the registry. Each member
 * takes its engine's settings as declared (values, bounds, defaults) and every other engine's as optional values it
 * ignores, checked against their own schema but never defaulted, so a config of one engine stays readable by another.
 */
import { z } from 'zod';
import { ENGINES } from '../core/servers/engines/registry.js';
import { bareSchema as bare, declaredFlag } from './setting.js';

type Engines = typeof ENGINES;
type Settings = Engines[number]['settings'];

/** An engine id. */
export type EngineKind = Engines[number]['kind'];
/** Every engine id, in registry order. */
export const ENGINE_KINDS = ENGINES.map((e) => e.kind) as [EngineKind, ...EngineKind[]];
/** The engine a config without `engine` runs: the registry's first. */
export const DEFAULT_ENGINE: EngineKind = ENGINE_KINDS[0];
export const EngineKindSchema = z.enum(ENGINE_KINDS);

type KeysOf<U> = U extends unknown ? keyof U : never;
type Key = KeysOf<Settings> & string;
type SchemaIn<E, K extends PropertyKey> = E extends { settings: infer S }
  ? K extends keyof S
    ? S[K] extends { schema: infer Z extends z.ZodType }
      ? Z
      : never
    : never
  : never;
/** A key's value across the engines that have it (a section's keys from all of them; a plain setting is one schema). */
type Each<K extends PropertyKey, T, Pick extends 'out' | 'in'> = T extends readonly [infer H, ...infer R]
  ? ([SchemaIn<H, K>] extends [never]
      ? unknown
      : NonNullable<Pick extends 'out' ? z.output<SchemaIn<H, K>> : z.input<SchemaIn<H, K>>>) &
      Each<K, R, Pick>
  : unknown;
type Out<K extends Key> = Each<K, Engines, 'out'>;
type In<K extends Key> = Each<K, Engines, 'in'>;
type InAll<K extends Key> = [Settings] extends [Record<K, unknown>] ? K : never;
type Always<K extends Key> = Settings extends unknown
  ? K extends keyof Settings
    ? Settings[K] extends { schema: infer Z extends z.ZodType }
      ? undefined extends z.output<Z>
        ? never
        : K
      : never
    : never
  : never;
type Present = { [K in Key as InAll<K> & Always<K>]: Out<K> };

/** A server config as parsed: its engine, the settings every engine has, any other engine's settings maybe. */
export type ServerConfig = { engine: EngineKind } & Present & { [K in Exclude<Key, keyof Present>]?: Out<K> };
/** A server config as written by a user, a preset or a form (defaults not yet applied). */
export type ServerConfigInput = { engine?: EngineKind } & { [K in Key]?: In<K> };

/** How a member takes a setting of another engine: its value checked, no default, absent allowed. */
function foreign(schema: z.ZodType): z.ZodType {
  const s = bare(schema);
  if (s instanceof z.ZodObject)
    return z
      .object(Object.fromEntries(Object.entries(s.shape).map(([k, v]) => [k, foreign(v as z.ZodType)])))
      .optional();
  return s.optional();
}

/** Every server setting under its key; a key two engines declare is one schema (sections: the same keys' schemas). */
function collect(): Map<string, z.ZodType> {
  const all = new Map<string, z.ZodType>();
  for (const engine of ENGINES) {
    for (const [key, entry] of Object.entries(engine.settings as Record<string, { schema: z.ZodType }>)) {
      const seen = all.get(key);
      declaredFlag(key, entry.schema);
      if (seen === undefined || seen === entry.schema) all.set(key, entry.schema);
      else if (!(bare(seen) instanceof z.ZodObject && bare(entry.schema) instanceof z.ZodObject))
        throw new Error(`server setting '${key}' is declared twice (${engine.kind}): declare it once and share it`);
      else all.set(key, widest(seen, entry.schema));
    }
  }
  return all;
}

/** Of two sections under one key, the one with every sub-key (the other's are all among them). */
function widest(a: z.ZodType, b: z.ZodType): z.ZodType {
  const [sa, sb] = [bare(a) as z.ZodObject, bare(b) as z.ZodObject];
  for (const [k, v] of Object.entries(sb.shape)) if (sa.shape[k] !== undefined && sa.shape[k] !== v) raise(k);
  return Object.keys(sb.shape).length > Object.keys(sa.shape).length ? b : a;
}

function raise(key: string): never {
  throw new Error(`diffusion-like section key '${key}' is declared twice: declare it once and share it`);
}

/** Every server setting key -> its schema, in registry order (the first engine that has it). */
export const SERVER_SETTING_SCHEMAS: ReadonlyMap<string, z.ZodType> = collect();

/** One engine's member of the union: its settings as declared, the others' as foreign. */
function member(engine: Engines[number], isDefault: boolean): z.ZodObject {
  const shape: Record<string, z.ZodType> = {};
  for (const [key, schema] of SERVER_SETTING_SCHEMAS) shape[key] = foreign(schema);
  for (const [key, entry] of Object.entries(engine.settings as Record<string, { schema: z.ZodType }>)) {
    const own = bare(entry.schema);
    const other = bare(SERVER_SETTING_SCHEMAS.get(key) as z.ZodType);
    shape[key] =
      own instanceof z.ZodObject && other instanceof z.ZodObject && other !== own
        ? z.object({ ...(bare(foreign(other)) as z.ZodObject).shape, ...own.shape }).optional()
        : entry.schema;
  }
  const literal = z.literal(engine.kind);
  return z.object({ engine: isDefault ? literal.default(engine.kind) : literal, ...shape });
}

const MEMBERS = ENGINES.map((e, i) => member(e, i === 0));

/** Everything needed to launch (or attach to) one inference server: one member per engine. */
export const ServerConfigSchema = z.discriminatedUnion(
  'engine',
  MEMBERS as unknown as [z.ZodObject, ...z.ZodObject[]],
) as unknown as z.ZodType<ServerConfig, ServerConfigInput>;

/** The server setting keys this servebench knows (every engine's). */
export const SERVER_KEYS: readonly string[] = ['engine', ...SERVER_SETTING_SCHEMAS.keys()];

/** The settings an engine declares (its own keys; the rest of a config it ignores). */
function engineSettingKeys(kind: string): readonly string[] {
  const engine = ENGINES.find((e) => e.kind === kind);
  return engine ? Object.keys(engine.settings) : [];
}

const isEmpty = (v: unknown): boolean =>
  v === undefined ||
  (Array.isArray(v) && v.length === 0) ||
  (typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length === 0);

/**
 * A server section as servebench 0.1 recorded it (one flat schema: every engine's defaults filled in, the
 * simulator's extra arguments under simArgs) in today's shape: the simulator's arguments are its extraArgs, and
 * defaults of settings its engine does not have are dropped (they were no one's choice).
 */
export function upgradeServerConfig(server: Record<string, unknown>): Record<string, unknown> {
  const out = { ...server };
  const kind = typeof out.engine === 'string' ? out.engine : DEFAULT_ENGINE;
  const own = engineSettingKeys(kind);
  if (Array.isArray(out.simArgs)) {
    const sim = out.simArgs as unknown[];
    delete out.simArgs;
    if (sim.length > 0) out.extraArgs = [...(Array.isArray(out.extraArgs) ? out.extraArgs : []), ...sim];
  }
  for (const [key, value] of Object.entries(out)) {
    const schema = SERVER_SETTING_SCHEMAS.get(key);
    if (!schema || own.includes(key)) continue;
    const fallback = schema.safeParse(undefined);
    const same = fallback.success && JSON.stringify(fallback.data) === JSON.stringify(value);
    if (same || isEmpty(value)) delete out[key];
  }
  return out;
}
