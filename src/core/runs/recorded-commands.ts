import { FIELDS, isServerField, type FieldDescriptor } from '../../shared/fields.js';
import { upgradeServerConfig } from '../../shared/server-schema.js';
import { TRUST_KINDS, type TrustKind } from '../../shared/setting.js';
import { formatCommand } from '../servers/engines/common.js';

// What a config makes servebench run or hand to a server, and the workload files whose text is sent: the settings
// whose declaration says `trust` (src/shared/setting.ts). A run folder from someone else can set any of them; `run
// --from` shows these and asks before it runs them (see run-seal.ts for how a folder of one's own is known).

/** One setting that decides what runs, with its value as a user reads it. */
export interface ExecutedSetting {
  /** Where it is set: `server.command`, `server.env.LD_PRELOAD`, `serverVariants[1].python`, `nvidiaSmi`. */
  setting: string;
  value: string;
}

/** The declared fields that decide what runs, in the order of their kind (command lines first, files last). */
function trustedFields(fields: readonly FieldDescriptor[]): FieldDescriptor[] {
  const rank = (f: FieldDescriptor): number => TRUST_KINDS.indexOf(f.trust as TrustKind);
  return fields.filter((f) => f.trust !== undefined).sort((a, b) => rank(a) - rank(b));
}

const valueAt = (section: Record<string, unknown>, path: readonly string[]): unknown =>
  path.reduce<unknown>((v, key) => (v && typeof v === 'object' ? (v as Record<string, unknown>)[key] : undefined), section);

/** The default a fresh run uses anyway: recorded as such, it asks nothing. */
function isDefault(field: FieldDescriptor, value: unknown): boolean {
  const fallback = field.schema.safeParse(undefined);
  return fallback.success && fallback.data !== undefined && JSON.stringify(fallback.data) === JSON.stringify(value);
}

/** One field's value as the user reads it: a command line, each variable of an environment, a path. */
function settingsOf(field: FieldDescriptor, value: unknown, at: string): ExecutedSetting[] {
  if (value === undefined || value === null || isDefault(field, value)) return [];
  if (Array.isArray(value)) {
    if (value.length === 0) return [];
    const words = value.map((x) => String(x));
    return [{ setting: at, value: formatCommand(words[0] as string, words.slice(1)) }];
  }
  if (typeof value === 'object')
    return Object.entries(value as Record<string, unknown>)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([name, v]) => ({ setting: `${at}.${name}`, value: String(v) }));
  const text = String(value);
  return text === '' ? [] : [{ setting: at, value: text }];
}

/** The settings of one server section (or sweep variant) that decide what runs; older records read in today's shape. */
function serverSettings(
  server: Record<string, unknown>,
  at: string,
  fields: readonly FieldDescriptor[],
): ExecutedSetting[] {
  const section = upgradeServerConfig(server);
  return fields.flatMap((f) => {
    const path = f.path.split('.').slice(1);
    return settingsOf(f, valueAt(section, path), `${at}.${path.join('.')}`);
  });
}

/**
 * Every setting of a config (recorded or about to run) that decides what runs or which files are sent, in order:
 * the server's, each sweep variant's, then the rest. `fields` is the declared list (a test marks one of its own).
 */
export function executedSettings(config: unknown, fields: readonly FieldDescriptor[] = FIELDS): ExecutedSetting[] {
  if (!config || typeof config !== 'object') return [];
  const c = config as Record<string, unknown>;
  const trusted = trustedFields(fields);
  const server = trusted.filter(isServerField);
  const out: ExecutedSetting[] = [];
  if (c.server && typeof c.server === 'object')
    out.push(...serverSettings(c.server as Record<string, unknown>, 'server', server));
  if (Array.isArray(c.serverVariants))
    c.serverVariants.forEach((v: unknown, i) => {
      if (v && typeof v === 'object')
        out.push(...serverSettings(v as Record<string, unknown>, `serverVariants[${i}]`, server));
    });
  for (const f of trusted.filter((x) => !isServerField(x))) out.push(...settingsOf(f, valueAt(c, f.path.split('.')), f.path));
  return out;
}
