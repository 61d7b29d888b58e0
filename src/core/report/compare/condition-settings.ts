import type { BenchConfig } from '../../../shared/config.js';
import { FIELDS, fieldApplies, isCondition, isServerField, type FieldDescriptor } from '../../../shared/fields.js';
import { fieldDefault, fieldText, getPath } from '../../../shared/field-values.js';
import { kebab } from '../../../shared/setting.js';

// The settings a measurement was taken under, beyond what compare shows in rows of their own (engine, model,
// quantization, dtype, lengths, diffusion): each declared a condition once, in its setting (SettingMeta.condition).
const OWN_ROWS = new Set([
  'server.engine',
  'server.model',
  'server.quantization',
  'server.dtype',
  'inputLen',
  'outputLen',
]);

const shownApart = (f: FieldDescriptor): boolean => OWN_ROWS.has(f.path) || f.path.startsWith('server.diffusion.');

/** A server configuration of a run: the base one with the sweep's variant `index` laid over it. */
function serverOf(config: BenchConfig, index: number): Record<string, unknown> {
  const variant = config.serverVariants?.[index];
  const base = config.server as unknown as Record<string, unknown>;
  if (!variant) return base;
  const merged: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(variant)) {
    const b = base[k];
    merged[k] =
      v && typeof v === 'object' && !Array.isArray(v) && b && typeof b === 'object' && !Array.isArray(b)
        ? { ...(b as Record<string, unknown>), ...(v as Record<string, unknown>) }
        : v;
  }
  return merged;
}

/**
 * `flag=value` of each field that has a value (its default where none was given), in declaration order; 'defaults'
 * when none has one (recorded, and all the engine's own defaults).
 */
function settingsText(fields: readonly FieldDescriptor[], at: (f: FieldDescriptor) => unknown): string {
  const parts: string[] = [];
  for (const f of fields) {
    const v = at(f) ?? fieldDefault(f);
    const text = fieldText(f, v);
    // A switch by its setting's own name (a flag may turn it off: --allow-eos sets ignore-eos off).
    const name = f.type === 'switch' ? kebab(f.path.split('.').pop() as string) : f.flag;
    if (text !== '') parts.push(`${name}=${text}`);
  }
  return parts.length > 0 ? parts.join(', ') : 'defaults';
}

/** The condition settings of a run's server configuration `index` and of its workload, each as one text. */
export function conditionSettings(config: BenchConfig, index: number): { serverSettings: string; workload: string } {
  const server = serverOf(config, index);
  const engine = typeof server.engine === 'string' ? server.engine : '';
  const serverFields = FIELDS.filter(
    (f) => isServerField(f) && isCondition(f) && !shownApart(f) && fieldApplies(f, engine),
  );
  const loadFields = FIELDS.filter((f) => !isServerField(f) && isCondition(f) && !shownApart(f));
  return {
    serverSettings: settingsText(serverFields, (f) => getPath({ server }, f.path)),
    workload: settingsText(loadFields, (f) => getPath(config, f.path)),
  };
}
