import type { ParseArgsConfig } from 'node:util';
import { ENGINE_FACTS } from '../shared/engines.js';
import type { FieldDescriptor } from '../shared/fields.js';
import { fieldDefault, fieldText, parseFieldText, setPath } from '../shared/field-values.js';
import { UserError } from '../core/errors.js';

type Options = NonNullable<ParseArgsConfig['options']>;
type Values = Record<string, unknown>;

/** The parseArgs options of some fields: a string per valued flag, booleans for switches and off flags. */
export function flagOptions(fields: readonly FieldDescriptor[]): Options {
  const out: Options = {};
  for (const f of fields) {
    const repeatable = f.type === 'args' || f.type === 'env' || f.repeatJoins === true;
    out[f.flag] =
      f.type === 'switch' ? { type: 'boolean' } : { type: 'string', ...(repeatable ? { multiple: true } : {}) };
    if (f.off) out[f.off] = { type: 'boolean' };
  }
  return out;
}

const HELP_COLUMN = 31;
const HELP_WIDTH = 80;

/** One help entry: `  --flag VALUE` then the text, wrapped under its column. */
export function helpLine(left: string, text: string): string {
  const words = text.split(' ');
  const lines: string[] = [];
  let line = '';
  for (const w of words) {
    if (line && HELP_COLUMN + line.length + 1 + w.length > HELP_WIDTH) {
      lines.push(line);
      line = w;
    } else line = line ? `${line} ${w}` : w;
  }
  if (line) lines.push(line);
  const head = `  ${left}`;
  const pad = ' '.repeat(HELP_COLUMN);
  const first = head.length < HELP_COLUMN ? head.padEnd(HELP_COLUMN) + (lines.shift() ?? '') : head;
  return [first.trimEnd(), ...lines.map((l) => pad + l)].join('\n');
}

/** Each engine's own flag for a server setting, where it is not servebench's (`vLLM --max-num-seqs, ...`). */
export function natives(f: FieldDescriptor): string {
  const key = f.path.split('.')[1] as string;
  return ENGINE_FACTS.filter((e) => !e.simulated && e.passes.includes(key))
    .map((e) => [e.name, e.native[key]] as const)
    .filter(([, n]) => n !== undefined && n.startsWith('-') && n !== `--${f.flag}`)
    .map(([name, n]) => `${name} ${n}`)
    .join(', ');
}

/** The help entries of some fields, in list order; `withNatives`: server settings name each engine's own flag. */
function fieldHelp(fields: readonly FieldDescriptor[], withNatives = false): string {
  return fields
    .map((f) => {
      const left = `--${f.flag}${f.metavar ? ` ${f.metavar}` : ''}${f.off ? ` | --${f.off}` : ''}`;
      const d = f.type === 'switch' || f.help.includes('default') ? undefined : fieldDefault(f);
      const own = withNatives && f.group === 'server' ? natives(f) : '';
      const text = `${f.help}${own ? ` (${own})` : ''}`;
      return helpLine(left, d === undefined ? text : `${text} (default ${fieldText(f, d)})`);
    })
    .join('\n');
}

/** One part of `servebench run --help` (and of the CLI reference in docs/cli.md): its fields and other flags. */
export interface HelpSection {
  readonly title: string;
  readonly fields: readonly FieldDescriptor[];
  /** Server settings name each engine's own flag. */
  readonly natives?: boolean;
  /** Flags that are no setting (--preset, --vary, --config ...): `[left, text]`. */
  readonly extra?: ReadonlyArray<readonly [string, string]>;
}

/** Sections as help text: a heading, its fields' entries, its other flags. */
export function sectionsHelp(sections: readonly HelpSection[]): string {
  return sections
    .map((s) =>
      [`${s.title}:`, fieldHelp(s.fields, s.natives), ...(s.extra ?? []).map(([l, t]) => helpLine(l, t))]
        .filter(Boolean)
        .join('\n'),
    )
    .join('\n');
}

/** A flag's text, trimmed; a flag given without one is a UserError naming it. */
export function flagText(values: Values, flag: string): string | undefined {
  const v = values[flag];
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || v.trim() === '') throw new UserError(`--${flag} needs a value`);
  return v.trim();
}

/** A repeated flag's values joined with commas, as one list given once (SettingMeta.repeatJoins). */
function joinedText(values: Values, flag: string): string | undefined {
  const v = values[flag];
  if (!Array.isArray(v)) return flagText(values, flag);
  if (v.some((x) => typeof x !== 'string' || x.trim() === '')) throw new UserError(`--${flag} needs a value`);
  return v.map((x: string) => x.trim()).join(',');
}

/** A field's value from its flag (and off flag), or undefined when neither was given. One line on a bad value. */
function readFlag(values: Values, f: FieldDescriptor): unknown {
  if (f.type === 'switch') {
    const on = values[f.flag] === true;
    const off = f.off !== undefined && values[f.off] === true;
    if (on && off) throw new UserError(`--${f.flag} and --${f.off} contradict each other; pass one`);
    if (on) return f.sets ?? true;
    return off ? false : undefined;
  }
  if (f.off && values[f.off] === true) {
    if (values[f.flag] !== undefined) throw new UserError(`--${f.flag} and --${f.off} contradict each other; pass one`);
    return 0;
  }
  const text = f.repeatJoins ? joinedText(values, f.flag) : flagText(values, f.flag);
  if (text === undefined) return undefined;
  const parsed = parseFieldText(f, text);
  if (!parsed.ok) throw new UserError(`--${f.flag} ${parsed.error}`);
  return parsed.value;
}

/** Types read by their command's own code (attach, the engine choice, a command line, repeatable lists). */
const OWN_SYNTAX = new Set(['engine', 'command', 'args', 'env']);

/**
 * Lays the flags of some fields over `target` (paths relative to `root`, e.g. 'server.'), skipping the
 * types with their own syntax.
 */
export function applyFlags(
  values: Values,
  fields: readonly FieldDescriptor[],
  target: Record<string, unknown>,
  root = '',
): void {
  for (const f of fields) {
    if (OWN_SYNTAX.has(f.type)) continue;
    const value = readFlag(values, f);
    if (value !== undefined) setPath(target, f.path.slice(root.length), value);
  }
}
