/**
 * Values of the fields in src/shared/fields.ts: the one number parser, each field's text read with its
 * range and shared bound (flags, --vary, YAML strings), server sweeps, and the schema's defaults as text.
 */
import { BenchConfigSchema, DiffusionConfigSchema, LIMITS } from './config.js';
import { SWEEPABLE_FIELDS, type FieldDescriptor } from './fields.js';

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

function tooLarge(f: FieldDescriptor, n: number, text: string): Parsed | undefined {
  if (!f.limit) return undefined;
  const { max, why } = LIMITS[f.limit];
  if (f.type === 'seconds') {
    return n * 1000 > max ? fail(`${text} is too large: at most ${max / 1000} s (${why})`) : undefined;
  }
  return n > max ? fail(`${text} is too large: at most ${max.toLocaleString('en-US')} (${why})`) : undefined;
}

function or(words: readonly string[]): string {
  return words.length <= 1 ? (words[0] ?? '') : `${words.slice(0, -1).join(', ')} or ${words[words.length - 1]}`;
}

function isHttpUrl(text: string): boolean {
  try {
    const u = new URL(text);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}

/** Parses a duration: plain seconds, or a number with ms, s, m or h; undefined when it is none. */
export function durationMs(text: string): number | undefined {
  const m = text.trim().match(/^(\d+(?:\.\d+)?)\s*(ms|s|m|min|h)?$/i);
  if (!m) return undefined;
  const unit = (m[2] ?? 's').toLowerCase();
  const factor = unit === 'ms' ? 1 : unit === 's' ? 1_000 : unit === 'h' ? 3_600_000 : 60_000;
  return Math.round(Number(m[1]) * factor);
}

/**
 * A field's value from its text as typed after a flag, in a --vary list or as a YAML string: strict
 * numbers, the field's range and its shared bound. Types with their own syntax (engine, url, command,
 * args, env) and switches are read where they are used.
 */
export function parseFieldText(f: FieldDescriptor, raw: string): Parsed {
  const text = raw.trim();
  const got = `(got '${text}')`;
  switch (f.type) {
    case 'int': {
      const min = f.min ?? 1;
      const n = plainNumber(text, true);
      if (!Number.isSafeInteger(n) || n < min || (f.max !== undefined && n > f.max)) {
        const range =
          f.max !== undefined
            ? `an integer from ${min} to ${f.max}`
            : min === 0
              ? 'a non-negative integer'
              : 'a positive integer';
        return fail(`must be ${range} ${got}`);
      }
      return tooLarge(f, n, text) ?? { ok: true, value: n };
    }
    case 'number':
    case 'seconds': {
      const n = plainNumber(text, false);
      const zeroOk = f.min === 0;
      if (!Number.isFinite(n) || n < 0 || (!zeroOk && n === 0)) {
        return fail(`must be a ${zeroOk ? 'non-negative' : 'positive'} number ${got}`);
      }
      const big = tooLarge(f, n, text);
      if (big) return big;
      return { ok: true, value: f.type === 'seconds' ? Math.max(1, Math.round(n * 1000)) : n };
    }
    case 'fraction': {
      const n = plainNumber(text, false);
      if (!Number.isFinite(n) || n <= 0 || n > 1) return fail(`must be a number in (0, 1] ${got}`);
      return { ok: true, value: n };
    }
    case 'int-list':
    case 'number-list': {
      const integer = f.type === 'int-list';
      const parts = text
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s.length > 0);
      const nums = parts.map((p) => plainNumber(p, integer));
      if (
        parts.length === 0 ||
        nums.some((n) => !Number.isFinite(n) || n <= 0 || (integer && !Number.isSafeInteger(n)))
      ) {
        return fail(
          `must be a comma-separated list of positive ${integer ? 'integers' : 'numbers'} written plainly ${got}`,
        );
      }
      for (const [i, n] of nums.entries()) {
        const big = tooLarge(f, n, parts[i] as string);
        if (big) return big;
      }
      return { ok: true, value: nums };
    }
    case 'duration': {
      const ms = durationMs(text);
      if (ms === undefined) return fail(`must be a duration such as 600, 90s, 20m or 1h ${got}`);
      if (ms <= 0) return fail(`must be longer than zero ${got}`);
      return { ok: true, value: ms };
    }
    case 'url':
      return isHttpUrl(text)
        ? { ok: true, value: text }
        : fail(`must be an http(s) URL such as http://127.0.0.1:8000 ${got}`);
    case 'choice':
      return f.choices?.includes(text) ? { ok: true, value: text } : fail(`must be ${or(f.choices ?? [])} ${got}`);
    default:
      return text === '' ? fail('needs a value') : { ok: true, value: text };
  }
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
): { ok: true; variants: Array<Record<string, unknown>> } | { ok: false; error: string } {
  let variants: Array<Record<string, unknown>> = [{}];
  for (const spec of specs) {
    const f = SWEEPABLE_FIELDS.find((x) => x.flag === spec.key);
    if (!f) return { ok: false, error: `KEY must be one of ${SWEEPABLE_FIELDS.map((x) => x.flag).join(', ')}` };
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

// The schema's defaults (diffusion's too, though a server has none until asked), so help and form never restate them.
const DEFAULTS: Record<string, unknown> = BenchConfigSchema.parse({});
setPath(DEFAULTS, 'server.diffusion', DiffusionConfigSchema.parse({}));

/** A field's default from the schema, or undefined when it has none (or only an empty one). */
export function fieldDefault(f: FieldDescriptor): unknown {
  const v = getPath(DEFAULTS, f.path);
  if (Array.isArray(v) && v.length === 0) return undefined;
  if (v && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 0) return undefined;
  return v;
}

const quoteWord = (w: string): string => (/[\s"'\\]/.test(w) ? `'${w.replace(/'/g, `'\\''`)}'` : w);

/** A config value written the way its flag (and the app's field) takes it. */
export function fieldText(f: FieldDescriptor, v: unknown): string {
  if (v === undefined || v === null) return '';
  if (f.type === 'args' || f.type === 'command') return (v as string[]).map(quoteWord).join(' ');
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
