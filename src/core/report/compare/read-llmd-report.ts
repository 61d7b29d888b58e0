import { readdir } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { z } from 'zod';
import { UserError } from '../../errors.js';
import {
  AIPERF_SOURCES,
  GUIDELLM_SUMMARY_SOURCES,
  GUIDELLM_TPOT_SOURCE,
  INFERENCE_PERF_RATE_SOURCE,
  INFERENCE_PERF_SOURCES,
  SERVEBENCH_SOURCES,
  VLLM_SOURCES,
  figureSources,
  unknownToolSources,
} from './definitions.js';
import type { Metric, MetricSources } from './definitions.js';
import {
  badContent,
  figure,
  finite,
  foundText,
  isRecord,
  jsonDocument,
  notFormat,
  num,
  folderBudget,
  readSiblingText,
  toMs,
} from './foreign-input.js';
import { noFigures } from './types.js';
import type { CompareLevel, CompareSeries, Conditions, FigureKey, LevelFigures, LevelLoad } from './types.js';

// llm-d-benchmark's Benchmark Report v0.2 (and its additive v0.2.1) as llmdbenchmark/analysis/benchmark_report/
// schema_v0_2.py defines it at llm-d/llm-d-benchmark 8bc9f1ddd873: {version, run: {uid, eid ..}, scenario: {stack:
// [components], load: {standardized: {tool, rate_qps, concurrency ..}}}, results: {request_performance: {aggregate:
// {requests, latency, throughput}}}}, each statistic {units, mean, p50, p95 ..}. One report describes one point of
// a sweep (one stage); llm-d writes each as its own YAML file (benchmark_report_v0.2,_<name>.yaml).

const EXPECTED = 'an llm-d Benchmark Report v0.2 (version, run, scenario and results)';
const StatSchema = z.looseObject({ units: z.string(), mean: num, p50: num, p95: num }).nullish();

const ReportSchema = z.looseObject({
  version: z.string(),
  run: z.looseObject({ uid: z.string(), eid: z.string().nullish(), description: z.string().nullish() }),
  scenario: z
    .looseObject({
      stack: z
        .array(
          z.looseObject({
            standardized: z.looseObject({
              kind: z.string(),
              tool: z.string(),
              tool_version: z.string(),
              model: z.looseObject({ name: z.string() }).nullish(),
              accelerator: z.looseObject({ model: z.string(), count: num }).nullish(),
            }),
          }),
        )
        .nullish(),
      load: z
        .looseObject({
          standardized: z.looseObject({
            tool: z.string(),
            tool_version: z.string(),
            stage: num,
            rate_qps: num,
            concurrency: num,
            input_seq_len: z.looseObject({ value: num }).nullish(),
            output_seq_len: z.looseObject({ value: num }).nullish(),
          }),
        })
        .nullish(),
    })
    .nullish(),
  results: z.looseObject({
    request_performance: z
      .looseObject({
        aggregate: z
          .looseObject({
            requests: z
              .looseObject({ total: num, failures: num, input_length: StatSchema, output_length: StatSchema })
              .nullish(),
            latency: z
              .looseObject({
                time_to_first_token: StatSchema,
                time_per_output_token: StatSchema,
                inter_token_latency: StatSchema,
                request_latency: StatSchema,
              })
              .nullish(),
            throughput: z.looseObject({ output_token_rate: StatSchema }).nullish(),
          })
          .nullish(),
      })
      .nullish(),
  }),
});
type Report = z.infer<typeof ReportSchema>;
type Latency = NonNullable<NonNullable<NonNullable<Report['results']['request_performance']>['aggregate']>['latency']>;
type LatencyField = 'time_to_first_token' | 'time_per_output_token' | 'inter_token_latency' | 'request_latency';
type Stat = z.infer<typeof StatSchema>;

/** How a report's figures are defined: by the workload generator that measured them (scenario.load.standardized.tool). */
interface ToolReading {
  sources: MetricSources;
  /** The latency field holding the tool's nearest figure to servebench's TPOT. */
  tpot: LatencyField;
}

// llm-d-benchmark's importers (native_to_br0_2.py) copy each tool's own figures into the report's fields.
const BY_TOOL: Record<string, ToolReading> = {
  servebench: { sources: SERVEBENCH_SOURCES, tpot: 'time_per_output_token' },
  'vllm-benchmark': { sources: VLLM_SOURCES, tpot: 'time_per_output_token' },
  'inference-perf': {
    sources: { ...INFERENCE_PERF_SOURCES, throughput: INFERENCE_PERF_RATE_SOURCE },
    tpot: 'time_per_output_token',
  },
  guidellm: { sources: { ...GUIDELLM_SUMMARY_SOURCES, tpot: GUIDELLM_TPOT_SOURCE }, tpot: 'time_per_output_token' },
  // import_aiperf writes AIPerf's ITL (servebench's TPOT formula on its own counts) as inter_token_latency.
  aiperf: { sources: AIPERF_SOURCES, tpot: 'inter_token_latency' },
};

const REPORT_FIELDS: Record<Metric, string> = {
  ttft: 'time_to_first_token',
  tpot: 'time_per_output_token',
  e2e: 'request_latency',
  throughput: 'output_token_rate',
};

/** True for a Benchmark Report's text: JSON or YAML with its version, run and results keys. */
export function looksLikeLlmdReport(text: string, doc: unknown): boolean {
  if (isRecord(doc)) return typeof doc.version === 'string' && isRecord(doc.results) && isRecord(doc.run);
  const head = text.slice(0, 64 * 1024);
  return /^version:\s*['"]?0\.\d/m.test(head) && /^results:/m.test(text) && /^run:/m.test(head);
}

/** Every report document of a file: one JSON object, or one or more YAML documents. */
function documents(text: string, file: string): unknown[] {
  const json = jsonDocument(text);
  if (json !== undefined) return [json];
  const docs = parseAllDocuments(text);
  const list = Array.isArray(docs) ? docs : [docs];
  const bad = list.find((d) => d.errors.length > 0);
  if (bad) throw new UserError(`${file} is not valid YAML: ${(bad.errors[0]?.message ?? '').split('\n')[0]}`);
  try {
    return list.map((d) => d.toJS({ maxAliasCount: 100 }) as unknown).filter((d) => d !== null && d !== undefined);
  } catch (error) {
    // The YAML library refuses aliases that would expand a small file into an enormous one.
    throw new UserError(`${file} is not YAML compare reads: ${error instanceof Error ? error.message : String(error)}`);
  }
}

function parseReport(doc: unknown, text: string, file: string): Report {
  if (!isRecord(doc) || typeof doc.version !== 'string' || !isRecord(doc.results))
    throw notFormat(file, EXPECTED, foundText(text, doc));
  if (doc.version === '0.1')
    throw new UserError(
      `${file} is a Benchmark Report v0.1: compare reads v0.2 and v0.2.1 (llm-d-benchmark writes v0.2)`,
    );
  if (!/^0\.2(\.\d+)?$/.test(doc.version))
    throw new UserError(`${file} is a Benchmark Report version ${doc.version}: compare reads v0.2 and v0.2.1`);
  const parsed = ReportSchema.safeParse(doc);
  if (!parsed.success) throw badContent(file, 'a Benchmark Report v0.2', parsed.error);
  return parsed.data;
}

function reading(tool: string): ToolReading {
  return BY_TOOL[tool] ?? { sources: unknownToolSources(tool), tpot: 'time_per_output_token' };
}

/** A latency statistic's p50 or p95 in ms (its units: s, ms, s/token, ms/token). */
function latencyMs(latency: Latency | null | undefined, field: LatencyField, p: 'p50' | 'p95'): number | null {
  const s: Stat = latency?.[field];
  return s ? toMs(figure(s[p]), s.units) : null;
}

function figuresOf(r: Report, read: ToolReading): LevelFigures {
  const agg = r.results.request_performance?.aggregate;
  const lat = agg?.latency;
  const rate = agg?.throughput?.output_token_rate;
  return {
    ...noFigures(),
    throughput: rate && rate.units === 'tokens/s' ? figure(rate.mean) : null,
    ttftP50: latencyMs(lat, 'time_to_first_token', 'p50'),
    ttftP95: latencyMs(lat, 'time_to_first_token', 'p95'),
    tpotP50: latencyMs(lat, read.tpot, 'p50'),
    tpotP95: latencyMs(lat, read.tpot, 'p95'),
    e2eP50: latencyMs(lat, 'request_latency', 'p50'),
    e2eP95: latencyMs(lat, 'request_latency', 'p95'),
  };
}

function loadOf(r: Report, file: string, notes: string[]): LevelLoad {
  const load = r.scenario?.load?.standardized;
  const rate = finite(load?.rate_qps);
  const conc = finite(load?.concurrency);
  if (rate !== null) {
    if (conc !== null) notes.push(`the ${rate} req/s level was capped at ${conc} requests in flight`);
    return { kind: 'rate', value: rate };
  }
  if (conc !== null) return { kind: 'concurrency', value: conc };
  throw new UserError(
    `${file} is a Benchmark Report that records neither scenario.load.standardized.rate_qps nor concurrency: compare matches levels by load`,
  );
}

function conditionsOf(r: Report): Conditions {
  const load = r.scenario?.load?.standardized;
  const engine = r.scenario?.stack?.find((c) => c.standardized.kind === 'inference_engine')?.standardized;
  const any = engine ?? r.scenario?.stack?.[0]?.standardized;
  const req = r.results.request_performance?.aggregate?.requests;
  const round = (v: number | null | undefined): number | undefined =>
    finite(v) === null ? undefined : Math.round(v as number);
  const acc = engine?.accelerator;
  return {
    measuredBy: `${load ? `${load.tool} ${load.tool_version}` : 'unknown tool'} (llm-d Benchmark Report ${r.version})`,
    engine: any ? `${any.tool} ${any.tool_version}` : undefined,
    model: engine?.model?.name,
    gpu: acc ? `${acc.count ?? '?'} × ${acc.model}` : undefined,
    inputLen: round(req?.input_length?.mean) ?? round(load?.input_seq_len?.value),
    outputLen: round(req?.output_length?.mean) ?? round(load?.output_seq_len?.value),
    simulated: any?.tool === 'servebench-sim' ? true : undefined,
  };
}

/** Reports of one experiment (run.eid, else one each) as series, one level per report. */
function seriesOf(reports: Array<{ report: Report; file: string }>, path: string): CompareSeries[] {
  const groups = new Map<string, Array<{ report: Report; file: string }>>();
  reports.forEach((x, i) => {
    const key = `${x.report.run.eid ?? `#${i}`}|${x.report.scenario?.load?.standardized.tool ?? ''}`;
    groups.set(key, [...(groups.get(key) ?? []), x]);
  });
  return [...groups.values()].map((group) => {
    const first = group[0] as { report: Report; file: string };
    const tool = first.report.scenario?.load?.standardized.tool ?? 'unknown tool';
    const read = reading(tool);
    const notes: string[] = [];
    const levels: CompareLevel[] = group.map(({ report, file }) => {
      const failures = finite(report.results.request_performance?.aggregate?.requests?.failures) ?? 0;
      const load = loadOf(report, file, notes);
      if (failures > 0) notes.push(`${failures} request(s) failed at ${load.kind} ${load.value}`);
      const figures = figuresOf(report, read);
      const missingRequests: Partial<Record<FigureKey, string>> = {};
      for (const k of Object.keys(figures) as FigureKey[])
        missingRequests[k] = 'a Benchmark Report holds aggregate statistics only (no requests)';
      return { load, figures, missingRequests };
    });
    const fields = Object.fromEntries(
      Object.entries(read.sources).map(([m, s]) => [
        m,
        { ...s, field: m === 'tpot' ? read.tpot : (REPORT_FIELDS[m as Metric] ?? s.field) },
      ]),
    ) as MetricSources;
    return {
      label: first.report.run.description ?? basename(first.file).replace(/\.(ya?ml|json)$/i, ''),
      source: 'llmd-report' as const,
      path,
      conditions: conditionsOf(first.report),
      levels,
      notes,
      figureHint: 'a Benchmark Report carries the statistics its producer filled in',
      definitions: figureSources(`${tool} (Benchmark Report)`, fields),
    };
  });
}

/** A Benchmark Report file: one JSON report, or YAML holding one report or several (one per level). */
export function readLlmdReportFile(text: string, file: string): CompareSeries[] {
  const docs = documents(text, file);
  if (docs.length === 0) throw notFormat(file, EXPECTED, 'an empty file');
  return seriesOf(
    docs.map((d) => ({ report: parseReport(d, text, file), file })),
    file,
  );
}

const REPORT_FILE = /^benchmark_report.*\.(ya?ml|json)$/i;

/** The Benchmark Report files of a folder (llm-d's benchmark_report_v0.2,_*.yaml), or null when none. */
async function reportFiles(dir: string): Promise<string[] | null> {
  const names = (await readdir(dir).catch(() => [] as string[])).filter((n) => REPORT_FILE.test(n)).sort();
  return names.length ? names.map((n) => join(dir, n)) : null;
}

/** True for a folder of Benchmark Reports. */
export async function isLlmdReportFolder(dir: string): Promise<boolean> {
  return (await reportFiles(dir)) !== null;
}

/** A folder of Benchmark Reports: the reports of one experiment (run.eid) become one series. */
export async function readLlmdReportFolder(dir: string): Promise<CompareSeries[]> {
  const files = (await reportFiles(dir)) ?? [];
  const reports: Array<{ report: Report; file: string }> = [];
  const budget = folderBudget();
  for (const file of files) {
    const text = await readSiblingText(file, budget);
    if (text === null) throw new UserError(`${file} cannot be read: check the folder`);
    for (const d of documents(text, file)) reports.push({ report: parseReport(d, text, file), file });
  }
  if (reports.length === 0) throw notFormat(dir, 'a folder of Benchmark Reports', 'no benchmark_report*.yaml');
  return seriesOf(reports, dir);
}
