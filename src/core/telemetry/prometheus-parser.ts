/** A small, strict-enough parser of the Prometheus text exposition format (0.0.4). */

/** One sample line: `name{labels} value [timestamp]`. */
export interface PromSample {
  name: string;
  labels: Record<string, string>;
  value: number;
  timestampMs?: number;
}

/** A parsed /metrics page. */
export interface PromText {
  samples: PromSample[];
  /** `# TYPE` per metric family name. */
  types: Map<string, string>;
  /** `# HELP` per metric family name (unescaped). */
  help: Map<string, string>;
  /** Lines that could not be parsed (kept for diagnostics, never fatal). */
  errors: string[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*/;

/** Parses a Prometheus float: decimals, exponents, +Inf/-Inf, NaN. */
function parsePromValue(text: string): number | null {
  const t = text.trim();
  if (/^[+]?inf$/i.test(t)) return Infinity;
  if (/^-inf$/i.test(t)) return -Infinity;
  if (/^nan$/i.test(t)) return NaN;
  if (!/^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$/.test(t) && !/^[-+]?0x[0-9a-f]+$/i.test(t)) return null;
  return Number(t);
}

function unescapeHelp(text: string): string {
  return text.replace(/\\(\\|n)/g, (_m, c: string) => (c === 'n' ? '\n' : '\\'));
}

/** Parses `{a="x",b="y\"z"}` starting at `start` (the `{`); returns labels and the index after `}`. */
function parseLabels(line: string, start: number): { labels: Record<string, string>; end: number } | null {
  const labels: Record<string, string> = {};
  let i = start + 1;
  const skipSpace = () => {
    while (line[i] === ' ' || line[i] === '\t') i++;
  };
  for (;;) {
    skipSpace();
    if (line[i] === '}') return { labels, end: i + 1 };
    const name = LABEL_NAME.exec(line.slice(i))?.[0];
    if (!name) return null;
    i += name.length;
    skipSpace();
    if (line[i] !== '=') return null;
    i++;
    skipSpace();
    if (line[i] !== '"') return null;
    i++;
    let value = '';
    for (;;) {
      const c = line[i];
      if (c === undefined) return null;
      if (c === '"') break;
      if (c === '\\') {
        const next = line[i + 1];
        if (next === 'n') value += '\n';
        else if (next === '"' || next === '\\') value += next;
        else if (next === undefined) return null;
        else value += `\\${next}`;
        i += 2;
        continue;
      }
      value += c;
      i++;
    }
    i++;
    labels[name] = value;
    skipSpace();
    if (line[i] === ',') {
      i++;
      continue;
    }
    if (line[i] === '}') return { labels, end: i + 1 };
    return null;
  }
}

/** Parses one sample line, or null when malformed. */
export function parsePromSampleLine(line: string): PromSample | null {
  const trimmed = line.trim();
  const name = NAME.exec(trimmed)?.[0];
  if (!name) return null;
  let i = name.length;
  let labels: Record<string, string> = {};
  while (trimmed[i] === ' ' || trimmed[i] === '\t') i++;
  if (trimmed[i] === '{') {
    const parsed = parseLabels(trimmed, i);
    if (!parsed) return null;
    labels = parsed.labels;
    i = parsed.end;
  }
  const rest = trimmed.slice(i).trim().split(/\s+/);
  if (rest.length < 1 || rest.length > 2 || rest[0] === '') return null;
  const value = parsePromValue(rest[0] ?? '');
  if (value === null) return null;
  const sample: PromSample = { name, labels, value };
  if (rest[1] !== undefined) {
    const ts = Number(rest[1]);
    if (!Number.isFinite(ts)) return null;
    sample.timestampMs = ts;
  }
  return sample;
}

/** Parses a whole /metrics page: comments, HELP/TYPE, labels with escapes, histograms, +Inf/NaN. */
export function parsePrometheusText(text: string): PromText {
  const out: PromText = { samples: [], types: new Map(), help: new Map(), errors: [] };
  for (const raw of text.split('\n')) {
    const line = raw.replace(/\r$/, '');
    if (!line.trim()) continue;
    if (line.trimStart().startsWith('#')) {
      const m = /^\s*#\s+(HELP|TYPE)\s+([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\s+(.*))?$/.exec(line);
      if (m?.[1] === 'TYPE') out.types.set(m[2] ?? '', (m[3] ?? 'untyped').trim());
      else if (m?.[1] === 'HELP') out.help.set(m[2] ?? '', unescapeHelp(m[3] ?? ''));
      continue;
    }
    const sample = parsePromSampleLine(line);
    if (sample) out.samples.push(sample);
    else out.errors.push(line);
  }
  return out;
}

/** The error of a line past its cap: no exposition line is that long, so the page is not one. */
export class LineTooLongError extends Error {
  readonly code = 'SB_LINE_TOO_LONG';
  constructor(readonly maxChars: number) {
    super(`a line longer than ${maxChars >> 10} KiB`);
  }
}

/** Options of parsePrometheusTextSliced. */
export interface SlicedParseOptions {
  /** Longest line accepted (default 64 KiB); a longer one rejects with LineTooLongError. */
  maxLineChars?: number;
  /** Metric names to keep; others are skipped before being parsed (a vLLM page is mostly histogram buckets). */
  keep?: (name: string) => boolean;
  /** Characters parsed between two yields to the event loop (default 64 Ki). */
  sliceChars?: number;
}

/** The metric name a sample line starts with, or '' for a line that is not one. */
function lineName(line: string, from: number, to: number): string {
  let end = from;
  while (end < to) {
    const c = line.charCodeAt(end);
    // Up to the first '{', space or tab.
    if (c === 123 || c === 32 || c === 9) break;
    end++;
  }
  return line.slice(from, end);
}

/**
 * parsePrometheusText for pages from outside, without taking the event loop for long: it yields between slices of
 * `sliceChars`, bounds each line, and parses only the samples (and TYPE/HELP) of the names `keep` wants.
 */
export async function parsePrometheusTextSliced(text: string, options: SlicedParseOptions = {}): Promise<PromText> {
  const maxLine = options.maxLineChars ?? 64 << 10;
  const slice = options.sliceChars ?? 64 << 10;
  const keep = options.keep ?? (() => true);
  const out: PromText = { samples: [], types: new Map(), help: new Map(), errors: [] };
  let start = 0;
  let nextYield = slice;
  while (start < text.length) {
    const nl = text.indexOf('\n', start);
    const end = nl < 0 ? text.length : nl;
    if (end - start > maxLine) throw new LineTooLongError(maxLine);
    let from = start;
    while (text[from] === ' ' || text[from] === '\t') from++;
    if (text[from] === '#') {
      const line = text.slice(start, end).replace(/\r$/, '');
      const m = /^\s*#\s+(HELP|TYPE)\s+([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\s+(.*))?$/.exec(line);
      if (m?.[2] !== undefined && keep(m[2])) {
        if (m[1] === 'TYPE') out.types.set(m[2], (m[3] ?? 'untyped').trim());
        else out.help.set(m[2], unescapeHelp(m[3] ?? ''));
      }
    } else if (from < end && keep(lineName(text, from, end))) {
      const line = text.slice(start, end).replace(/\r$/, '');
      if (line.trim()) {
        const sample = parsePromSampleLine(line);
        if (sample) out.samples.push(sample);
        else out.errors.push(line);
      }
    }
    start = end + 1;
    if (start >= nextYield) {
      nextYield = start + slice;
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }
  return out;
}

/** Sum of a metric over all its label sets (optionally only those matching `where`), or null when absent. */
export function sumMetric(
  text: PromText,
  name: string,
  where?: (labels: Record<string, string>) => boolean,
): number | null {
  let total: number | null = null;
  for (const s of text.samples) {
    if (s.name !== name || (where && !where(s.labels))) continue;
    if (Number.isNaN(s.value)) continue;
    total = (total ?? 0) + s.value;
  }
  return total;
}

/** Largest value of a metric over its label sets, or null when absent. */
export function maxMetric(text: PromText, name: string): number | null {
  let best: number | null = null;
  for (const s of text.samples) {
    if (s.name !== name || Number.isNaN(s.value)) continue;
    best = best === null ? s.value : Math.max(best, s.value);
  }
  return best;
}

/** A histogram family summed over its label sets (except `le`): cumulative buckets, sum, count. */
export interface PromHistogram {
  buckets: Array<{ le: number; count: number }>;
  sum: number | null;
  count: number | null;
}

/** Reads histogram `name` from its `_bucket`, `_sum` and `_count` samples, or null when absent. */
export function getHistogram(text: PromText, name: string): PromHistogram | null {
  const buckets = new Map<number, number>();
  for (const s of text.samples) {
    if (s.name !== `${name}_bucket` || s.labels.le === undefined) continue;
    const le = parsePromValue(s.labels.le);
    if (le === null || Number.isNaN(le)) continue;
    buckets.set(le, (buckets.get(le) ?? 0) + s.value);
  }
  const sum = sumMetric(text, `${name}_sum`);
  const count = sumMetric(text, `${name}_count`);
  if (buckets.size === 0 && sum === null && count === null) return null;
  return {
    buckets: [...buckets.entries()].sort((a, b) => a[0] - b[0]).map(([le, c]) => ({ le, count: c })),
    sum,
    count,
  };
}
