/**
 * The simulator's structured answers: a JSON value that a JSON Schema accepts, and a string a regex fully matches,
 * for the subset a benchmark's schemas and patterns use. Outside it the simulator answers free text, as an engine
 * without support would, and the structured-output check says so.
 */

type Schema = Record<string, unknown>;
const isObject = (v: unknown): v is Schema => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Deepest nesting generated: a recursive schema must still end. */
const MAX_DEPTH = 8;

function sampleString(s: Schema, seed: number): string {
  const min = typeof s.minLength === 'number' ? s.minLength : 1;
  const max = typeof s.maxLength === 'number' ? s.maxLength : Math.max(min, 12);
  if (typeof s.pattern === 'string') {
    const m = sampleRegex(s.pattern, seed);
    if (m !== null) return m;
  }
  const base = `value${seed % 1000}`;
  let out = base;
  while (out.length < min) out += 'x';
  return out.slice(0, Math.max(min, Math.min(max, out.length)));
}

function sampleNumber(s: Schema, integer: boolean, seed: number): number {
  const lo =
    typeof s.minimum === 'number' ? s.minimum : typeof s.exclusiveMinimum === 'number' ? s.exclusiveMinimum + 1 : 0;
  const hi =
    typeof s.maximum === 'number'
      ? s.maximum
      : typeof s.exclusiveMaximum === 'number'
        ? s.exclusiveMaximum - 1
        : lo + 100;
  const span = Math.max(0, hi - lo);
  const v = lo + (span === 0 ? 0 : seed % (span + 1));
  return integer ? Math.ceil(v) : v + (v < hi ? 0.5 : 0);
}

/** A value `schema` accepts; undefined where the schema is outside the supported subset. */
export function sampleJson(schema: unknown, seed = 0, depth = 0): unknown {
  if (schema === true || (isObject(schema) && Object.keys(schema).length === 0)) return {};
  if (!isObject(schema) || depth > MAX_DEPTH) return undefined;
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[seed % schema.enum.length];
  for (const key of ['anyOf', 'oneOf'] as const) {
    const list = schema[key];
    if (Array.isArray(list) && list.length > 0) return sampleJson(list[0], seed, depth + 1);
  }
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'object':
    case undefined: {
      if (type === undefined && !isObject(schema.properties)) return undefined;
      const props = isObject(schema.properties) ? schema.properties : {};
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(props)) {
        const value = sampleJson(v, seed + k.length, depth + 1);
        if (value === undefined) return undefined;
        out[k] = value;
      }
      return out;
    }
    case 'array': {
      const n = typeof schema.minItems === 'number' ? Math.max(schema.minItems, 1) : 2;
      const items = Array.from({ length: n }, (_, i) => sampleJson(schema.items ?? {}, seed + i, depth + 1));
      return items.some((i) => i === undefined) ? undefined : items;
    }
    case 'string':
      return sampleString(schema, seed);
    case 'integer':
      return sampleNumber(schema, true, seed);
    case 'number':
      return sampleNumber(schema, false, seed);
    case 'boolean':
      return seed % 2 === 0;
    case 'null':
      return null;
    default:
      return undefined;
  }
}

/** One parsed piece of a pattern: what it emits once, and how often it repeats at the least. */
interface Atom {
  emit: (seed: number) => string | null;
  min: number;
}

const CLASS_PICK: Record<string, string> = { d: '7', w: 'a', s: ' ', D: 'x', W: '-', S: 'x' };

/** The first character a bracket class [...] allows; null for a negated one. */
function classChar(body: string): string | null {
  if (body.startsWith('^')) return null;
  if (body.startsWith('\\')) return CLASS_PICK[body[1] ?? ''] ?? body[1] ?? null;
  return body[0] ?? null;
}

/** Parses the alternatives of a pattern from `i` up to a closing parenthesis (or the end). */
function parseAlternatives(p: string, start: number): { alts: Atom[][]; end: number } | null {
  const alts: Atom[][] = [[]];
  let i = start;
  while (i < p.length && p[i] !== ')') {
    const c = p[i]!;
    let atom: Atom | null = null;
    if (c === '|') {
      alts.push([]);
      i++;
      continue;
    }
    if (c === '^' || c === '$') {
      i++;
      continue;
    }
    if (c === '(') {
      const inner = p.startsWith('(?:', i) ? 3 : 1;
      const group = parseAlternatives(p, i + inner);
      if (!group || p[group.end] !== ')') return null;
      const first = group.alts[0]!;
      atom = { emit: (s) => emitAll(first, s), min: 1 };
      i = group.end + 1;
    } else if (c === '[') {
      const close = p.indexOf(']', i + 2);
      if (close < 0) return null;
      const ch = classChar(p.slice(i + 1, close));
      if (ch === null) return null;
      atom = { emit: () => ch, min: 1 };
      i = close + 1;
    } else if (c === '\\') {
      const e = p[i + 1] ?? '';
      const ch = CLASS_PICK[e] ?? e;
      atom = { emit: () => ch, min: 1 };
      i += 2;
    } else if (c === '.') {
      atom = { emit: () => 'x', min: 1 };
      i++;
    } else if ('*+?{'.includes(c)) {
      return null;
    } else {
      atom = { emit: () => c, min: 1 };
      i++;
    }
    const q = p[i];
    if (q === '*' || q === '?') {
      atom.min = 0;
      i++;
    } else if (q === '+') {
      i++;
    } else if (q === '{') {
      const m = /^\{(\d+)(,\d*)?\}/.exec(p.slice(i));
      if (!m) return null;
      atom.min = Number(m[1]);
      i += m[0].length;
    }
    if (p[i] === '?') i++; // a lazy quantifier repeats as often at the least
    alts[alts.length - 1]!.push(atom);
  }
  return { alts, end: i };
}

function emitAll(atoms: readonly Atom[], seed: number): string | null {
  let out = '';
  for (const a of atoms) {
    for (let k = 0; k < a.min; k++) {
      const piece = a.emit(seed);
      if (piece === null) return null;
      out += piece;
    }
  }
  return out;
}

/** A string the pattern matches in full (the shortest of its first alternative), or null outside the subset. */
export function sampleRegex(pattern: string, seed = 0): string | null {
  const parsed = parseAlternatives(pattern, 0);
  if (!parsed || parsed.end !== pattern.length) return null;
  const alt = parsed.alts[seed % parsed.alts.length]!;
  const text = emitAll(alt, seed);
  if (text === null) return null;
  try {
    return new RegExp(`^(?:${pattern})$`, 'u').test(text) ? text : null;
  } catch {
    return null;
  }
}
