/**
 * Values of the fields in src/shared/fields.ts: the one number parser, a field's text read into a value and checked
 * by its own schema (flags, --vary, YAML strings, the app's form), the one wording of what a field takes, server
 * sweeps, and the schema's defaults as text.
 */
import { z } from 'zod';
import { SWEEPABLE_FIELDS, bareSchema, type FieldDescriptor } from './fields.js';
import { limitAt, limitOf } from './setting.js';

/** The value at a dotted path ('server.diffusion.threshold'). */
export function getPath(obj: unknown, path: string): unknown {
  let cur = obj;
  for (const key of path.split('.')) {
    if (!cur || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[key];
  }
  return cur;
}

/** Sets the value at a dotted path, making the objects on the way (copies them, so a base is never changed). */
export function setPath(obj: Record<string, unknown>, path: string, value: unknown): void {
  const keys = path.split('.');
  let cur = obj;
  for (const key of keys.slice(0, -1)) {
    const next = cur[key];
    const copy = next && typeof next === 'object' && !Array.isArray(next) ? { ...(next as object) } : {};
    cur[key] = copy;
    cur = copy as Record<string, unknown>;
  }
  cur[keys[keys.length - 1] as string] = value;
}

// ---- values -------------------------------------------------------------------------------------

const INTEGER = /^\d+$/;
const DECIMAL = /^(\d+(\.\d*)?|\.\d+)$/;

/** The one number parser: digits (and a decimal point when allowed); 1e3, 0x10, Infinity, signs and `_` are NaN. */
export function plainNumber(text: string, integer: boolean): number {
  const t = text.trim();
  return (integer ? INTEGER : DECIMAL).test(t) ? Number(t) : Number.NaN;
}

/** A parsed value, or what is wrong with the text (to follow the flag or the field's label). */
export type Parsed = { ok: true; value: unknown } | { ok: false; error: string };

const fail = (error: string): Parsed => ({ ok: false, error });

function or(words: readonly string[]): string {
  return words.length <= 1 ? (words[0] ?? '') : `${words.slice(0, -1).join(', ')} or ${words[words.length - 1]}`;
}

/** Parses a duration: plain seconds, or a number with ms, s, m or h; undefined when it is none. */
export function durationMs(text: string): number | undefined {
  const m = text.trim().match(/^(\d+(?:\.\d+)?)\s*(ms|s|m|min|h)?$/i);
  if (!m) return undefined;
  const unit = (m[2] ?? 's').toLowerCase();
  const factor = unit === 'ms' ? 1 : unit === 's' ? 1_000 : unit === 'h' ? 3_600_000 : 60_000;
  return Math.round(Number(m[1]) * factor);
}

// ---- what a field takes, in words, from its schema ----------------------------------------------

interface NumberBounds {
  integer: boolean;
  lower?: { value: number; inclusive: boolean };
  /** An upper bound without a reason of its own (a reasoned one reads as "too large"). */
  upper?: { value: number; inclusive: boolean };
}

type CheckDef = { check?: string; value?: number; inclusive?: boolean; format?: string; error?: unknown };

function boundsOf(schema: z.ZodType): NumberBounds {
  const s = bareSchema(schema);
  const checks = ((s._zod.def as { checks?: Array<{ _zod: { def: CheckDef } }> }).checks ?? []).map((c) => c._zod.def);
  const out: NumberBounds = { integer: s instanceof z.ZodNumber && s.isInt === true };
  for (const c of checks) {
    if (c.check === 'greater_than') out.lower = { value: c.value as number, inclusive: c.inclusive === true };
    if (c.check === 'less_than' && c.error === undefined)
      out.upper = { value: c.value as number, inclusive: c.inclusive === true };
  }
  return out;
}

/** "a positive integer", "an integer from 0 to 65535", "a number in (0, 1]": what a number setting takes. */
function numberWords(b: NumberBounds, plural: boolean): string {
  const noun = b.integer ? (plural ? 'integers' : 'integer') : plural ? 'numbers' : 'number';
  const a = (word: string): string => (plural ? word : `${/^[aeiou]/.test(word) ? 'an' : 'a'} ${word}`);
  const { lower, upper } = b;
  if (lower && upper) {
    if (b.integer) return a(`${noun} from ${lower.value + (lower.inclusive ? 0 : 1)} to ${upper.value}`);
    return a(`${noun} in ${lower.inclusive ? '[' : '('}${lower.value}, ${upper.value}${upper.inclusive ? ']' : ')'}`);
  }
  if (lower && lower.value === 0) return a(`${lower.inclusive ? 'non-negative' : 'positive'} ${noun}`);
  if (lower && lower.value === 1 && b.integer && lower.inclusive) return a(`positive ${noun}`);
  if (lower) return a(`${noun} of at least ${lower.value}`);
  return b.integer ? a('whole number') : a(noun);
}

/** What a field's text must be, in words (the one wording the CLI, YAML and the app share). */
export function takes(f: FieldDescriptor): string {
  const s = bareSchema(f.schema);
  if (f.type === 'int-list' || f.type === 'number-list') {
    const el = (s as z.ZodArray).element as z.ZodType;
    return `a comma-separated list of ${numberWords(boundsOf(el), true)} written plainly`;
  }
  if (f.type === 'seconds') return numberWords({ ...boundsOf(f.schema), integer: false }, false);
  if (f.type === 'int' || f.type === 'number') return numberWords(boundsOf(f.schema), false);
  if (f.type === 'duration') return 'a duration such as 600, 90s, 20m or 1h';
  if (f.choices) return or(f.choices);
  return OTHER_WORDS[f.type] ?? 'text';
}

const OTHER_WORDS: Partial<Record<FieldDescriptor['type'], string>> = {
  url: 'an http(s) URL',
  command: 'a command line',
  args: 'one argument, repeatable',
  env: 'KEY=VALUE, repeatable',
};

/** A field's reasoned upper bound in words (`at most 4,096: ...`), in the unit it is written in; '' without one. */
export function limitWords(f: FieldDescriptor): string {
  const s = bareSchema(f.schema);
  const target = s instanceof z.ZodArray ? (s.element as z.ZodType) : f.schema;
  const checks = ((bareSchema(target)._zod.def as { checks?: Array<{ _zod: { def: CheckDef } }> }).checks ?? []).map(
    (c) => c._zod.def,
  );
  const at = checks.find((c) => c.check === 'less_than' && c.error !== undefined);
  const limit = at?.value === undefined ? undefined : limitAt(at.value);
  if (!limit) return '';
  const max = limit.shown ?? (seconds(f) ? `${limit.max / 1000} s` : limit.max.toLocaleString('en-US'));
  return `at most ${max}: ${limit.why}`;
}

const seconds = (f: FieldDescriptor): boolean => f.type === 'seconds';

/** One zod issue of a field's value in words, `(got 'text')` and bounds in the field's own unit. */
function issueText(f: FieldDescriptor, issue: z.core.$ZodIssue, text: string): string {
  const got = `(got '${text}')`;
  const limit = limitOf(issue.message);
  if (issue.code === 'too_big' && limit) {
    const max = limit.shown ?? (seconds(f) ? `${limit.max / 1000} s` : limit.max.toLocaleString('en-US'));
    return `${text} is too large: at most ${max} (${limit.why})`;
  }
  // A schema's own wording of what it takes ("must be a path such as /health"), or a check's own sentence.
  if (/^must /.test(issue.message)) return `${issue.message} ${got}`;
  if (issue.code === 'custom') return issue.message;
  if (f.type === 'text' && issue.code === 'too_small') return 'needs a value';
  return `must be ${takes(f)} ${got}`;
}

/** The value a field's text stands for before its schema checks it, or what is wrong with how it is written. */
function candidate(f: FieldDescriptor, text: string): Parsed & { parts?: string[] } {
  const syntax = (): Parsed => fail(`must be ${takes(f)} (got '${text}')`);
  switch (f.type) {
    case 'int':
    case 'number': {
      const n = plainNumber(text, f.integer);
      return Number.isFinite(n) ? { ok: true, value: n } : syntax();
    }
    case 'seconds': {
      const n = plainNumber(text, false);
      return Number.isFinite(n) ? { ok: true, value: n === 0 ? 0 : Math.max(1, Math.round(n * 1000)) } : syntax();
    }
    case 'int-list':
    case 'number-list': {
      const parts = text
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s.length > 0);
      const nums = parts.map((p) => plainNumber(p, f.integer));
      if (parts.length === 0 || nums.some((n) => !Number.isFinite(n))) return syntax();
      return { ok: true, value: nums, parts };
    }
    case 'duration': {
      const ms = durationMs(text);
      if (ms === undefined) return syntax();
      return ms <= 0 ? fail(`must be longer than zero (got '${text}')`) : { ok: true, value: ms };
    }
    default:
      return text === '' ? fail('needs a value') : { ok: true, value: text };
  }
}

/**
 * A field's value from its text as typed after a flag, in a --vary list, as a YAML string or in the app's form:
 * read as the field is written (strict numbers, seconds, durations, lists), then checked by the field's own schema.
 * Types with their own syntax (engine, command, args, env) and switches are read where they are used.
 */
export function parseFieldText(f: FieldDescriptor, raw: string): Parsed {
  const text = raw.trim();
  const read = candidate(f, text);
  if (!read.ok) return read;
  return checkValue(f, read.value, text, read.parts);
}

/** A value checked by its field's schema: the value as parsed, or the schema's first issue in words. */
export function checkValue(f: FieldDescriptor, value: unknown, text = String(value), parts?: string[]): Parsed {
  const checked = f.schema.safeParse(value);
  if (checked.success) return { ok: true, value: checked.data };
  const issue = checked.error.issues[0] as z.core.$ZodIssue;
  const index = issue.path[0];
  const part = typeof index === 'number' && parts ? (parts[index] ?? text) : text;
  return fail(issueText(f, issue, part));
}

// ---- server sweeps --------------------------------------------------------------------------------

/** One `--vary KEY=V1,V2`: the key (a sweepable field's flag) and its values as typed. */
export interface VarySpec {
  key: string;
  values: string[];
}

/** Server variants as the cartesian product of the sweeps, each value read like its flag; or what is wrong. */
export function expandVary(
  specs: readonly VarySpec[],
  offered: readonly FieldDescriptor[] = SWEEPABLE_FIELDS,
): { ok: true; variants: Array<Record<string, unknown>> } | { ok: false; error: string } {
  let variants: Array<Record<string, unknown>> = [{}];
  for (const spec of specs) {
    const f = offered.find((x) => x.flag === spec.key);
    if (!f) return { ok: false, error: `KEY must be one of ${offered.map((x) => x.flag).join(', ')}` };
    const values = spec.values.map((v) => v.trim()).filter(Boolean);
    if (values.length === 0) return { ok: false, error: `${spec.key}= needs at least one value` };
    const parsed: unknown[] = [];
    for (const v of values) {
      const p = parseFieldText(f, v);
      if (!p.ok) return { ok: false, error: `${spec.key} ${p.error}` };
      parsed.push(p.value);
    }
    const local = f.path.slice('server.'.length);
    variants = variants.flatMap((base) =>
      parsed.map((value) => {
        const next = { ...base };
        setPath(next, local, value);
        return next;
      }),
    );
  }
  return { ok: true, variants };
}

/** A server variant in words, e.g. `tp=2 · gpu-memory=0.8` (the app's and the CLI's label of a setup). */
export function describeVariant(variant: Record<string, unknown>): string {
  return SWEEPABLE_FIELDS.filter((f) => getPath(variant, f.path.slice('server.'.length)) !== undefined)
    .map((f) => `${f.flag}=${String(getPath(variant, f.path.slice('server.'.length)))}`)
    .join(' · ');
}

// ---- defaults ------------------------------------------------------------------------------------

/** A field's default from its schema, or undefined when it has none (or only an empty one). */
export function fieldDefault(f: FieldDescriptor): unknown {
  const parsed = f.schema.safeParse(undefined);
  const v = parsed.success ? parsed.data : undefined;
  if (Array.isArray(v) && v.length === 0) return undefined;
  if (v && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 0) return undefined;
  return v;
}

const quoteWord = (w: string): string => (/[\s"'\\]/.test(w) ? `'${w.replace(/'/g, `'\\''`)}'` : w);

/** A config value written the way its flag (and the app's field) takes it. */
export function fieldText(f: FieldDescriptor, v: unknown): string {
  if (v === undefined || v === null) return '';
  if (f.type === 'args' || f.type === 'command') return (v as string[]).map(quoteWord).join(' ');
  if (f.type === 'env')
    return Object.entries(v as Record<string, unknown>)
      .map(([k, x]) => `${k}=${quoteWord(String(x))}`)
      .join(' ');
  if (Array.isArray(v)) return v.join(',');
  if (typeof v === 'boolean') return v ? 'on' : 'off';
  if (f.ui === 'percent') return String(Math.round((v as number) * 10_000) / 100);
  if (f.type === 'seconds') return String((v as number) / 1000);
  if (f.type === 'duration') {
    const ms = v as number;
    return ms % 60_000 === 0 ? `${ms / 60_000}m` : `${ms / 1000}s`;
  }
  return String(v);
}
