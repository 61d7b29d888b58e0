import { basename, dirname, join } from 'node:path';
import { z } from 'zod';
import { UserError } from '../../errors.js';
import { AIPERF_SOURCES, figureSources } from './definitions.js';
import {
  badContent,
  figure,
  finite,
  foundText,
  isRecord,
  jsonDocument,
  labelOf,
  notFormat,
  num,
  readSiblingText,
  toMs,
} from './foreign-input.js';
import { noFigures } from './types.js';
import type { CompareSeries, FigureKey, LevelFigures, LevelLoad } from './types.js';

// NVIDIA AIPerf's aggregate exports, as aiperf/exporters/json_exporter.py and csv_exporter.py write them at
// ai-dynamo/aiperf db4f6397d11e: profile_export_aiperf.json holds one object per metric tag ({unit, avg, p1 .. p99,
// min, max, std} in display units: ms, tokens/sec) beside input_config (the user's settings, unset ones left out);
// profile_export_aiperf.csv holds the same figures as "Header (unit)" rows rounded to two decimals, and no settings.

const JSON_NAME = 'profile_export_aiperf.json';
const CSV_NAME = 'profile_export_aiperf.csv';
const EXPECTED =
  'an AIPerf profile export (profile_export_aiperf.json or .csv, metrics such as time_to_first_token with a unit)';

const MetricSchema = z.looseObject({
  unit: z.string(),
  avg: num,
  p50: num,
  p95: num,
  min: num,
  max: num,
});
type Metric = z.infer<typeof MetricSchema>;

const ExportSchema = z.looseObject({
  time_to_first_token: MetricSchema.optional(),
  inter_token_latency: MetricSchema.optional(),
  request_latency: MetricSchema.optional(),
  output_token_throughput: MetricSchema.optional(),
  request_count: MetricSchema.optional(),
  error_request_count: MetricSchema.optional(),
  input_sequence_length: MetricSchema.optional(),
  output_sequence_length: MetricSchema.optional(),
  was_cancelled: z.boolean().nullish(),
  input_config: z
    .looseObject({
      endpoint: z
        .looseObject({ model_names: z.array(z.string()).nullish(), streaming: z.boolean().nullish() })
        .nullish(),
      loadgen: z
        .looseObject({ concurrency: num, request_rate: num, request_rate_mode: z.string().nullish() })
        .nullish(),
      input: z.looseObject({ fixed_schedule: z.boolean().nullish() }).nullish(),
    })
    .nullish(),
});
type AiperfExport = z.infer<typeof ExportSchema>;

const METRIC_TAGS = ['time_to_first_token', 'inter_token_latency', 'request_latency', 'output_token_throughput'];

/** True for the JSON export: metric objects with a unit, keyed by AIPerf's tags. */
export function looksLikeAiperfJson(doc: unknown): boolean {
  return (
    isRecord(doc) &&
    METRIC_TAGS.some((k) => isRecord(doc[k]) && typeof (doc[k] as Record<string, unknown>).unit === 'string')
  );
}

/** True for the CSV export: its "Metric,avg,..." (request metrics) or "Metric,Value" (system metrics) header. */
export function looksLikeAiperfCsv(text: string): boolean {
  return /^\uFEFF?Metric,(?:avg,|Value\r?$)/m.test(text.split('\n', 1)[0] ?? '');
}

// AIPerf's metric headers (each metric class's `header`) as the CSV writes them, and the tags they stand for.
const CSV_HEADERS: Record<string, string> = {
  'Time to First Token': 'time_to_first_token',
  'Inter Token Latency': 'inter_token_latency',
  'Request Latency': 'request_latency',
  'Output Token Throughput': 'output_token_throughput',
  'Request Count': 'request_count',
  'Error Request Count': 'error_request_count',
  'Input Sequence Length': 'input_sequence_length',
  'Output Sequence Length': 'output_sequence_length',
};

/** One CSV line's cells (AIPerf's csv.writer quotes a cell only when it holds a comma or a quote). */
function cells(line: string): string[] {
  const out: string[] = [];
  const re = /(?:^|,)(?:"((?:[^"]|"")*)"|([^,]*))/g;
  for (let m = re.exec(line); m && m.index < line.length; m = re.exec(line)) {
    out.push(m[1] !== undefined ? m[1].replace(/""/g, '"') : (m[2] ?? ''));
    if (re.lastIndex === m.index) re.lastIndex++;
  }
  return out;
}

/** The CSV's rows as the JSON export's metric objects (the units the headers name). */
function csvToExport(text: string, file: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  let header: string[] = [];
  for (const raw of text.replace(/^\uFEFF/, '').split('\n')) {
    const line = raw.replace(/\r$/, '');
    if (!line.trim()) continue;
    const row = cells(line);
    if (row[0] === 'Metric') {
      header = row;
      continue;
    }
    const m = /^(.*?)(?: \(([^()]+)\))?$/.exec(row[0] ?? '');
    const tag = CSV_HEADERS[m?.[1] ?? ''];
    if (!tag) continue;
    const metric: Record<string, unknown> = { unit: m?.[2] ?? 'count' };
    header.forEach((h, i) => {
      if (i === 0) return;
      const v = Number(row[i]);
      metric[h === 'Value' ? 'avg' : h] = row[i] === '' || row[i] === undefined || !Number.isFinite(v) ? null : v;
    });
    out[tag] = metric;
  }
  if (Object.keys(out).length === 0) throw notFormat(file, EXPECTED, 'a Metric table with none of its metrics');
  return out;
}

/** A metric's p50/p95 in ms (or its avg for a rate), null where the export lacks it. */
function stat(m: Metric | undefined, key: 'p50' | 'p95' | 'avg', asTime: boolean): number | null {
  if (!m) return null;
  const v = figure(m[key]);
  return asTime ? toMs(v, m.unit) : v;
}

function figuresOf(e: AiperfExport): LevelFigures {
  const rate = e.output_token_throughput;
  return {
    ...noFigures(),
    throughput: rate && /^tokens\/s(ec)?$/.test(rate.unit) ? stat(rate, 'avg', false) : null,
    ttftP50: stat(e.time_to_first_token, 'p50', true),
    ttftP95: stat(e.time_to_first_token, 'p95', true),
    tpotP50: stat(e.inter_token_latency, 'p50', true),
    tpotP95: stat(e.inter_token_latency, 'p95', true),
    e2eP50: stat(e.request_latency, 'p50', true),
    e2eP95: stat(e.request_latency, 'p95', true),
  };
}

type LoadGen = NonNullable<NonNullable<AiperfExport['input_config']>['loadgen']>;

/** The load from input_config, AIPerf's own rules (user_config.py): a rate wins; neither set is concurrency 1. */
function loadOf(loadgen: LoadGen | null | undefined, notes: string[]): LevelLoad {
  const rate = finite(loadgen?.request_rate);
  const conc = finite(loadgen?.concurrency);
  if (rate !== null) {
    const mode = loadgen?.request_rate_mode ?? 'poisson';
    if (mode !== 'poisson')
      notes.push(`AIPerf sent ${rate} req/s with ${mode} arrivals (servebench's rate levels are Poisson)`);
    if (conc !== null) notes.push(`AIPerf capped the rate level at ${conc} requests in flight`);
    return { kind: 'rate', value: rate };
  }
  if (conc === null)
    notes.push('AIPerf was given neither --concurrency nor --request-rate: its default, concurrency 1');
  return { kind: 'concurrency', value: conc ?? 1 };
}

/** AIPerf's own artifact folder name: "<model>-openai-chat-concurrency4" or "...-request_rate32.0". */
function loadFromFolderName(dir: string): LoadGen | null {
  const name = basename(dir);
  const c = /-concurrency(\d+)(?:-|$)/.exec(name);
  const r = /-request_rate(\d+(?:\.\d+)?)(?:-|$)/.exec(name);
  if (!c && !r) return null;
  return { concurrency: c ? Number(c[1]) : null, request_rate: r ? Number(r[1]) : null };
}

/** The settings a CSV lacks: from the JSON export beside it, else from AIPerf's artifact folder name. */
async function settingsBesideCsv(file: string): Promise<AiperfExport['input_config']> {
  const beside = await readSiblingText(join(dirname(file), JSON_NAME));
  const parsed = beside === null ? undefined : ExportSchema.safeParse(jsonDocument(beside));
  if (parsed?.success && parsed.data.input_config) return parsed.data.input_config;
  const loadgen = loadFromFolderName(dirname(file));
  if (loadgen) return { loadgen };
  throw new UserError(
    `${file} is AIPerf's CSV export, which records no load: keep ${JSON_NAME} beside it (or compare that file)`,
  );
}

function seriesOf(e: AiperfExport, file: string, fromCsv: boolean): CompareSeries {
  const notes: string[] = [];
  const settings = e.input_config;
  if (settings?.input?.fixed_schedule)
    throw new UserError(`${file} is an AIPerf fixed-schedule (trace) run: it has no load compare can match`);
  const load = loadOf(settings?.loadgen, notes);
  const failed = finite(e.error_request_count?.avg);
  if (failed) notes.push(`${failed} request(s) failed (AIPerf's error_request_count); the figures are over the others`);
  if (fromCsv) notes.push("AIPerf's CSV rounds every figure to two decimals");
  if (settings?.endpoint?.streaming === false) notes.push('AIPerf ran without --streaming: it has no TTFT or ITL');
  const figures = figuresOf(e);
  const why = "AIPerf's profile export holds summaries only (no per-request figures)";
  const missingRequests: Partial<Record<FigureKey, string>> = {};
  for (const k of Object.keys(figures) as FigureKey[]) missingRequests[k] = why;
  const mean = (m: Metric | undefined): number | undefined => {
    const v = finite(m?.avg);
    return v === null ? undefined : Math.round(v);
  };
  return {
    label: labelOf(file, [JSON_NAME, CSV_NAME]),
    source: 'aiperf',
    path: file,
    conditions: {
      measuredBy: 'aiperf (profile export)',
      model: settings?.endpoint?.model_names?.[0],
      inputLen: mean(e.input_sequence_length),
      outputLen: mean(e.output_sequence_length),
    },
    levels: [{ load, figures, missingRequests, partial: e.was_cancelled === true }],
    notes,
    figureHint: 'AIPerf writes p50 and p95 of its latencies; output_token_throughput is one figure',
    definitions: figureSources('AIPerf', AIPERF_SOURCES),
  };
}

/** An AIPerf profile export (JSON or CSV) as one series of one level: AIPerf runs one load per profile. */
export async function readAiperf(text: string, file: string): Promise<CompareSeries[]> {
  const doc = jsonDocument(text);
  const fromCsv = doc === undefined && looksLikeAiperfCsv(text);
  const raw = fromCsv ? csvToExport(text, file) : doc;
  if (!fromCsv && !looksLikeAiperfJson(raw)) throw notFormat(file, EXPECTED, foundText(text, doc));
  const parsed = ExportSchema.safeParse(raw);
  if (!parsed.success) throw badContent(file, 'an AIPerf profile export', parsed.error);
  const data = parsed.data;
  if (fromCsv) data.input_config = await settingsBesideCsv(file);
  return [seriesOf(data, file, fromCsv)];
}
