import { vllmKeyOf } from '../../../shared/metrics.js';
import type { Stat } from '../../../shared/metrics.js';
import { UserError } from '../../errors.js';
import { figuresFromBlocks } from './statistics.js';
import { FIGURES, noFigures } from './types.js';
import type {
  CompareLevel,
  CompareQuantity,
  CompareRequest,
  CompareSeries,
  Conditions,
  FigureKey,
  LevelFigures,
  LevelLoad,
} from './types.js';

// Field sets matched against vllm/benchmarks/serve.py of vLLM at commit 009e6d4a1cd6ba3fb2a9fc00f4ec06f5297232a1
// (`vllm bench serve --save-result [--save-detailed] [--append-result]`) and python/sglang/bench_serving.py of
// SGLang at commit 0033168f0f58b2bc05aa0273bd475d9c01bafb1c (`--output-file x.jsonl [--output-details]`).

type Json = Record<string, unknown>;

/** What compare reads, for the one line that refuses anything else. */
export const ACCEPTED_INPUTS =
  'give a run folder, a servebench report --format json file, a vllm bench serve --save-result file, an sglang bench_serving .jsonl, ' +
  'an AIPerf profile export, a guidellm benchmarks.json, an inference-perf report or an llm-d Benchmark Report (see --format-in)';

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const numList = (v: unknown): number[] | null =>
  Array.isArray(v) && v.every((x) => typeof x === 'number') ? (v as number[]) : null;

/** Python's json.dumps writes Infinity and NaN bare (SGLang's request_rate=inf): turn them into strings first. */
export function parsePythonJson(text: string): unknown {
  return JSON.parse(text.replace(/([:[,]\s*)(-?Infinity|NaN)(?=\s*[,\]}])/g, '$1"$2"'));
}

/** The objects of a result file: one JSON object (--save-result) or one per line (--append-result, SGLang). */
export function parseResultObjects(text: string, file: string): Json[] {
  const trimmed = text.trim();
  if (!trimmed) throw new UserError(`${file} is empty: ${ACCEPTED_INPUTS}`);
  const objects: Json[] = [];
  try {
    const whole = parsePythonJson(trimmed);
    if (whole && typeof whole === 'object' && !Array.isArray(whole)) return [whole as Json];
    if (Array.isArray(whole)) return whole.filter((o): o is Json => !!o && typeof o === 'object');
  } catch {
    // not one document: read it line by line
  }
  let bad = 0;
  for (const line of trimmed.split('\n')) {
    if (!line.trim()) continue;
    try {
      const o = parsePythonJson(line);
      if (o && typeof o === 'object' && !Array.isArray(o)) objects.push(o as Json);
      else bad++;
    } catch {
      bad++;
    }
  }
  if (objects.length === 0) throw new UserError(`${file} is not JSON: ${ACCEPTED_INPUTS}`);
  if (bad > 0) objects.push({ __bad: bad });
  return objects;
}

/** Which tool wrote these objects, or undefined when neither. */
export function resultKind(objects: readonly Json[]): 'vllm' | 'sglang' | undefined {
  const o = objects.find((x) => !('__bad' in x));
  if (!o) return undefined;
  if ('median_e2el_ms' in o || 'endpoint_type' in o || ('date' in o && 'model_id' in o)) return 'vllm';
  if ('median_e2e_latency_ms' in o || 'total_output_tokens_retokenized' in o) return 'sglang';
  return undefined;
}

function loadOf(o: Json): { load: LevelLoad; note?: string } {
  const rate = num(o.request_rate);
  const maxC = num(o.max_concurrency) ?? num(o.concurrency_limit);
  if (rate !== null) return { load: { kind: 'rate', value: rate } };
  if (maxC !== null) return { load: { kind: 'concurrency', value: maxC } };
  const n = num(o.num_prompts) ?? num(o.completed) ?? 0;
  return {
    load: { kind: 'concurrency', value: n },
    note: `a level without a rate or max_concurrency sent all ${n} requests at once: matched as concurrency ${n}`,
  };
}

/** vLLM's key of each compared figure, as the registry names them (p95 and p99.9 need --metric-percentiles). */
const VLLM_KEYS: Record<FigureKey, string> = Object.fromEntries(
  FIGURES.map((f) => [f.key, f.quantity ? vllmKeyOf(f.quantity, `p${f.percentile}` as Stat) : 'output_throughput']),
);

const SUMMARY_KEYS: Record<'vllm' | 'sglang', Record<FigureKey, string>> = {
  vllm: VLLM_KEYS,
  sglang: {
    throughput: 'output_throughput',
    ttftP50: 'median_ttft_ms',
    ttftP95: 'p95_ttft_ms',
    tpotP50: 'median_tpot_ms',
    tpotP95: 'p95_tpot_ms',
    e2eP50: 'median_e2e_latency_ms',
    e2eP95: 'p95_e2e_latency_ms',
  },
};

function summaryFigures(o: Json, kind: 'vllm' | 'sglang'): LevelFigures {
  const f = noFigures();
  for (const [k, key] of Object.entries(SUMMARY_KEYS[kind]) as Array<[FigureKey, string]>) f[k] = num(o[key]);
  return f;
}

/** The compared figures of one latency. */
const figuresOf = (q: CompareQuantity): FigureKey[] => FIGURES.filter((f) => f.quantity === q).map((f) => f.key);

/** One level from one object: per-request lists where the file has them, the tool's summaries otherwise. */
function levelOf(o: Json, kind: 'vllm' | 'sglang', tool: string): { level: CompareLevel; note?: string } {
  const { load, note } = loadOf(o);
  const summary = summaryFigures(o, kind);
  const ttfts = numList(o.ttfts);
  const latencies = kind === 'vllm' ? numList(o.latencies) : null;
  const outLens = numList(o.output_lens);
  const errors = Array.isArray(o.errors) ? (o.errors as unknown[]) : null;
  const duration = num(o.duration);
  const n = Math.max(ttfts?.length ?? 0, latencies?.length ?? 0, outLens?.length ?? 0);
  if (n === 0 || duration === null || duration <= 0) {
    const why = `${tool} wrote summaries only (no per-request lists: ${kind === 'vllm' ? 'run it with --save-detailed' : 'run it with --output-details'})`;
    const missing: Partial<Record<FigureKey, string>> = {};
    for (const k of Object.keys(summary) as FigureKey[]) missing[k] = why;
    return { level: { load, figures: summary, missingRequests: missing }, note };
  }
  const same = (l: unknown[] | null): boolean => !!l && l.length === n;
  const ok = (i: number): boolean => {
    if (errors && typeof errors[i] === 'string' && errors[i] !== '') return false;
    return latencies ? (latencies[i] ?? 0) > 0 : (ttfts?.[i] ?? 0) > 0;
  };
  const requests: CompareRequest[] = [];
  for (let i = 0; i < n; i++) {
    const good = ok(i);
    const ttft = same(ttfts) && good ? (ttfts?.[i] ?? 0) * 1000 : null;
    const e2e = same(latencies) && good ? (latencies?.[i] ?? 0) * 1000 : null;
    const out = same(outLens) && good ? (outLens?.[i] ?? 0) : 0;
    // vLLM's own TPOT: (latency - ttft) / (output_len - 1), for output_len > 1.
    const tpot = ttft !== null && e2e !== null && out > 1 ? (e2e - ttft) / (out - 1) : null;
    requests.push({ ttftMs: ttft, tpotMs: tpot, e2eMs: e2e, outTokens: out });
  }
  const blocks = [{ windowMs: duration * 1000, requests }];
  const fromRequests = figuresFromBlocks(blocks, same(outLens));
  const missing: Partial<Record<FigureKey, string>> = {};
  const figures: LevelFigures = { ...summary };
  const lack = (keys: FigureKey[], what: string): void => {
    for (const k of keys) missing[k] = `${tool} wrote no per-request ${what}`;
  };
  if (!same(outLens)) lack(['throughput'], 'output lengths');
  if (!same(ttfts)) lack(figuresOf('ttft'), 'TTFTs');
  if (!same(latencies)) lack(figuresOf('e2e'), 'latencies');
  const forTpot = [
    same(latencies) ? null : 'latencies',
    same(ttfts) ? null : 'TTFTs',
    same(outLens) ? null : 'output lengths',
  ].filter((x): x is string => x !== null);
  if (forTpot.length) lack(figuresOf('tpot'), `${forTpot.join(' or ')} (TPOT needs all three)`);
  for (const k of Object.keys(figures) as FigureKey[]) if (!missing[k]) figures[k] = fromRequests[k] ?? null;
  return { level: { load, figures, blocks, missingRequests: missing }, note };
}

function mean(values: number[] | null): number | undefined {
  if (!values || values.length === 0) return undefined;
  return Math.round(values.reduce((a, b) => a + b, 0) / values.length);
}

function conditionsOf(o: Json, kind: 'vllm' | 'sglang'): Conditions {
  const sb = (o.servebench && typeof o.servebench === 'object' ? o.servebench : undefined) as Json | undefined;
  const completed = num(o.completed);
  const perRequest = (total: unknown): number | undefined => {
    const t = num(total);
    return t !== null && completed ? Math.round(t / completed) : undefined;
  };
  const model = typeof o.model_id === 'string' ? o.model_id : typeof o.model === 'string' ? o.model : undefined;
  return {
    measuredBy: sb ? 'servebench (vllm-json export)' : kind === 'vllm' ? 'vllm bench serve' : 'sglang bench_serving',
    model,
    inputLen: num(sb?.input_len) ?? perRequest(o.total_input_tokens) ?? mean(numList(o.input_lens)),
    outputLen: num(sb?.output_len) ?? perRequest(o.total_output_tokens) ?? mean(numList(o.output_lens)),
    simulated: typeof sb?.simulated === 'boolean' ? sb.simulated : undefined,
  };
}

/** A vLLM or SGLang result file as one compare series (one level per object). */
export function seriesFromResultObjects(objects: Json[], path: string, label: string): CompareSeries {
  const kind = resultKind(objects);
  if (!kind)
    throw new UserError(
      `${path} is no file compare knows (not a servebench run record, no median_e2el_ms / median_e2e_latency_ms): ${ACCEPTED_INPUTS}`,
    );
  const tool = kind === 'vllm' ? 'vllm bench serve' : 'sglang bench_serving';
  const good = objects.filter((o) => !('__bad' in o));
  const notes: string[] = [];
  const bad = objects.find((o) => '__bad' in o);
  if (bad) notes.push(`${String(bad.__bad)} line(s) of ${path} could not be read and were left out`);
  const levels: CompareLevel[] = [];
  for (const o of good) {
    const { level, note } = levelOf(o, kind, tool);
    if (note) notes.push(note);
    levels.push(level);
  }
  const conditions = conditionsOf(good[0] ?? {}, kind);
  if (kind === 'vllm' && typeof good[0]?.backend === 'string')
    notes.push(`${tool} backend '${String(good[0].backend)}': the file does not say which engine served it`);
  const models = new Set(good.map((o) => o.model_id ?? o.model).filter((m) => typeof m === 'string'));
  if (models.size > 1) notes.push(`${path} holds results of ${models.size} models; its conditions show the first`);
  const hint =
    kind === 'vllm'
      ? 'vllm bench serve writes p99 only unless --metric-percentiles names 95, and E2E summaries only with --percentile-metrics e2el'
      : 'sglang bench_serving writes median and p99 only';
  return { label, source: kind, path, conditions, levels, notes, figureHint: hint };
}
