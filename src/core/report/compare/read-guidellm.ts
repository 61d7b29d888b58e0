import { z } from 'zod';
import { UserError } from '../../errors.js';
import { GUIDELLM_REQUEST_SOURCES, GUIDELLM_SUMMARY_SOURCES, figureSources } from './definitions.js';
import { badContent, figure, finite, foundText, isRecord, labelOf, notFormat, num } from './foreign-input.js';
import { figuresFromBlocks } from './statistics.js';
import { noFigures } from './types.js';
import type { CompareLevel, CompareRequest, CompareSeries, FigureKey, LevelFigures, LevelLoad } from './types.js';

// guidellm's benchmarks.json as GenerativeBenchmarksReport.save_file writes it at vllm-project/guidellm ee7a77457ba6
// (src/guidellm/benchmark/schemas/report.py, benchmark.py, metrics.py; schemas/request_stats.py, statistics.py):
// {metadata: {version: 2, guidellm_version}, config, benchmarks: [{config: {strategy, backend}, metrics: {name:
// {successful: {mean, median, percentiles: {p50, p95 ..}}, ..}}, requests: {successful: [stats], errored, incomplete}}]}.
// Times are Unix seconds (time.time()); *_ms figures are milliseconds, request_latency seconds.

const EXPECTED = 'a guidellm benchmarks.json (metadata.guidellm_version and a benchmarks list)';

const DistSchema = z.looseObject({
  mean: num,
  median: num,
  count: num,
  percentiles: z.looseObject({ p50: num, p95: num }).nullish(),
});
const StatusDistSchema = z.looseObject({ successful: DistSchema.nullish() }).nullish();

const RequestSchema = z.looseObject({
  info: z.looseObject({
    timings: z.looseObject({
      request_start: num,
      first_token_iteration: num,
      request_end: num,
      token_iterations: num,
    }),
  }),
  output_tokens: num,
  output_metrics: z.looseObject({ total_tokens: num }).nullish(),
});
type RequestStats = z.infer<typeof RequestSchema>;

const BenchmarkSchema = z.looseObject({
  config: z.looseObject({
    strategy: z.looseObject({ type_: z.string(), streams: num, rate: num, max_concurrency: num }),
    backend: z.looseObject({ model: z.string().nullish() }).nullish(),
  }),
  metrics: z.looseObject({
    request_totals: z.looseObject({ successful: num, errored: num, incomplete: num, total: num }),
    time_to_first_token_ms: StatusDistSchema,
    inter_token_latency_ms: StatusDistSchema,
    request_latency: StatusDistSchema,
    output_tokens_per_second: StatusDistSchema,
    prompt_token_count: StatusDistSchema,
    output_token_count: StatusDistSchema,
  }),
  requests: z
    .looseObject({
      successful: z.array(RequestSchema).nullish(),
      errored: z.array(RequestSchema).nullish(),
      incomplete: z.array(z.unknown()).nullish(),
    })
    .nullish(),
});
type Benchmark = z.infer<typeof BenchmarkSchema>;

const ReportSchema = z.looseObject({
  metadata: z.looseObject({ version: num, guidellm_version: z.string().nullish() }).nullish(),
  benchmarks: z.array(BenchmarkSchema),
});

/** True for a guidellm report: its benchmarks list beside guidellm's metadata (or generative benchmarks in it). */
export function looksLikeGuidellm(doc: unknown): boolean {
  if (!isRecord(doc) || !Array.isArray(doc.benchmarks)) return false;
  const meta = doc.metadata;
  const first: unknown = doc.benchmarks[0];
  return (isRecord(meta) && 'guidellm_version' in meta) || (isRecord(first) && first.type_ === 'generative_benchmark');
}

/** A benchmark's load from its scheduling strategy (src/guidellm/scheduler/strategies.py). */
function loadOf(b: Benchmark, notes: string[]): LevelLoad | null {
  const s = b.config.strategy;
  const cap = finite(s.max_concurrency);
  switch (s.type_) {
    case 'synchronous':
      return { kind: 'concurrency', value: 1 };
    case 'concurrent':
      return finite(s.streams) === null ? null : { kind: 'concurrency', value: s.streams as number };
    case 'throughput': {
      if (cap !== null) return { kind: 'concurrency', value: cap };
      const n = finite(b.metrics.request_totals.total) ?? 0;
      notes.push(`guidellm's throughput benchmark sent all ${n} requests at once: matched as concurrency ${n}`);
      return { kind: 'concurrency', value: n };
    }
    case 'constant':
    case 'poisson': {
      const rate = finite(s.rate);
      if (rate === null) return null;
      if (s.type_ === 'constant')
        notes.push(`guidellm's ${rate} req/s level sent at a constant rate (servebench's are Poisson)`);
      return { kind: 'rate', value: rate };
    }
    default:
      notes.push(`a guidellm '${s.type_}' benchmark has no load compare can match: left out`);
      return null;
  }
}

/** The requests listed, when they are all of the benchmark's finished ones (no sample_size kept fewer). */
function allRequests(b: Benchmark): { ok: RequestStats[]; failed: RequestStats[] } | null {
  const ok = b.requests?.successful ?? [];
  const failed = b.requests?.errored ?? [];
  const totals = b.metrics.request_totals;
  if (ok.length === 0 || ok.length !== totals.successful || failed.length !== (totals.errored ?? 0)) return null;
  return { ok, failed };
}

/** Output tokens as guidellm counts them: the server's usage, else one per streamed iteration (request_stats.py). */
function outputTokens(r: RequestStats): number {
  return (
    finite(r.output_tokens) ?? finite(r.output_metrics?.total_tokens) ?? finite(r.info.timings.token_iterations) ?? 0
  );
}

/** servebench's per-request figures from guidellm's timings (seconds to ms). */
function toRequest(r: RequestStats): CompareRequest {
  const t = r.info.timings;
  const start = finite(t.request_start);
  const first = finite(t.first_token_iteration);
  const end = finite(t.request_end);
  const out = outputTokens(r);
  // Times no request can have (a first token before the send, an end before it) are left out.
  const rawTtft = start !== null && first !== null ? (first - start) * 1000 : null;
  const ttft = rawTtft !== null && rawTtft >= 0 ? rawTtft : null;
  const rawE2e = start !== null && end !== null ? (end - start) * 1000 : null;
  const e2e = rawE2e !== null && rawE2e >= (ttft ?? 0) ? rawE2e : null;
  const tpot = ttft !== null && e2e !== null && out > 1 ? (e2e - ttft) / (out - 1) : null;
  return { ttftMs: ttft, tpotMs: tpot, e2eMs: e2e, outTokens: out };
}

function requestLevel(
  load: LevelLoad,
  reqs: { ok: RequestStats[]; failed: RequestStats[] },
  notes: string[],
): CompareLevel {
  const all = [...reqs.ok, ...reqs.failed];
  const starts = all.map((r) => finite(r.info.timings.request_start)).filter((v): v is number => v !== null);
  const ends = all.map((r) => finite(r.info.timings.request_end)).filter((v): v is number => v !== null);
  const windowMs = starts.length && ends.length ? (Math.max(...ends) - Math.min(...starts)) * 1000 : 0;
  const ok = reqs.ok.map(toRequest);
  const impossible = ok.filter((r) => r.ttftMs === null || r.e2eMs === null).length;
  if (impossible > 0)
    notes.push(
      `${impossible} request(s) at ${load.kind} ${load.value} had timings no request can have: left out of the latencies`,
    );
  const requests = [...ok, ...reqs.failed.map(() => ({ ttftMs: null, tpotMs: null, e2eMs: null, outTokens: 0 }))];
  const blocks = [{ windowMs, requests }];
  return { load, figures: figuresFromBlocks(blocks), blocks };
}

const pick = (d: z.infer<typeof StatusDistSchema>, p: 'p50' | 'p95', scale = 1): number | null => {
  const v = figure(d?.successful?.percentiles?.[p]);
  return v === null ? null : v * scale;
};

function summaryLevel(load: LevelLoad, b: Benchmark, why: string): CompareLevel {
  const m = b.metrics;
  const figures: LevelFigures = {
    ...noFigures(),
    throughput: figure(m.output_tokens_per_second?.successful?.mean),
    ttftP50: pick(m.time_to_first_token_ms, 'p50'),
    ttftP95: pick(m.time_to_first_token_ms, 'p95'),
    tpotP50: pick(m.inter_token_latency_ms, 'p50'),
    tpotP95: pick(m.inter_token_latency_ms, 'p95'),
    e2eP50: pick(m.request_latency, 'p50', 1000),
    e2eP95: pick(m.request_latency, 'p95', 1000),
  };
  const missingRequests: Partial<Record<FigureKey, string>> = {};
  for (const k of Object.keys(figures) as FigureKey[]) missingRequests[k] = why;
  return { load, figures, missingRequests };
}

/** A guidellm benchmarks.json as one series, one level per benchmark (a sweep gives several). */
export function readGuidellm(doc: unknown, file: string, text = ''): CompareSeries[] {
  if (!looksLikeGuidellm(doc)) throw notFormat(file, EXPECTED, foundText(text, doc));
  const parsed = ReportSchema.safeParse(doc);
  if (!parsed.success) throw badContent(file, 'a guidellm benchmarks.json', parsed.error);
  const report = parsed.data;
  const notes: string[] = [];
  if ((report.metadata?.version ?? 2) > 2)
    notes.push(`report schema version ${report.metadata?.version} is newer than the 2 compare was written for`);
  const loads = report.benchmarks.map((b) => loadOf(b, notes));
  // One definition per series: per-request figures only where every benchmark lists all its requests.
  const perRequest = report.benchmarks.map(allRequests);
  const exact = perRequest.every((r) => r !== null);
  const levels: CompareLevel[] = [];
  report.benchmarks.forEach((b, i) => {
    const load = loads[i];
    if (!load) return;
    const incomplete = finite(b.metrics.request_totals.incomplete) ?? 0;
    if (incomplete > 0)
      notes.push(
        `${incomplete} request(s) still running when guidellm stopped its ${load.kind} ${load.value} benchmark are left out`,
      );
    const reqs = perRequest[i];
    if (exact && reqs) levels.push(requestLevel(load, reqs, notes));
    else
      levels.push(summaryLevel(load, b, 'guidellm kept only some requests (sample_size) or none: its summaries only'));
  });
  if (levels.length === 0) throw new UserError(`${file} holds no guidellm benchmark at a concurrency or a rate`);
  const first = report.benchmarks[0];
  const mean = (d: z.infer<typeof StatusDistSchema>): number | undefined => {
    const v = finite(d?.successful?.mean);
    return v === null ? undefined : Math.round(v);
  };
  return [
    {
      label: labelOf(file, ['benchmarks.json']),
      source: 'guidellm',
      path: file,
      conditions: {
        measuredBy: `guidellm ${report.metadata?.guidellm_version ?? ''}`.trim(),
        model: first?.config.backend?.model ?? undefined,
        inputLen: mean(first?.metrics.prompt_token_count),
        outputLen: mean(first?.metrics.output_token_count),
      },
      levels,
      notes,
      figureHint: exact ? undefined : "guidellm's summaries give p50 and p95 of each figure",
      definitions: figureSources('guidellm', exact ? GUIDELLM_REQUEST_SOURCES : GUIDELLM_SUMMARY_SOURCES),
    },
  ];
}
