import { readdir } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { UserError } from '../../errors.js';
import { INFERENCE_PERF_RATE_SOURCE, INFERENCE_PERF_SOURCES, figureSources } from './definitions.js';
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
} from './foreign-input.js';
import { noFigures } from './types.js';
import type { CompareLevel, CompareSeries, FigureKey, LevelFigures, LevelLoad } from './types.js';

// kubernetes-sigs/inference-perf's lifecycle reports as inference_perf/reportgen/base.py writes them at 7de5ef2ed6f7
// (summarize_requests: {benchmark_time_seconds, load_summary: {count, requested_rate, concurrency ..}, successes:
// {count, latency: {time_to_first_token: {mean, median, p95 ..}, ..} (seconds), throughput: {output_tokens_per_sec
// ..}, output_tokens: {total ..}}, failures: {count ..}}), one per stage (stage_N_lifecycle_metrics.json) and one over
// all stages (summary_lifecycle_metrics.json), in a reports-YYYYMMDD-HHMMSS/ folder beside config.yaml.

const EXPECTED = 'an inference-perf lifecycle report (load_summary, successes and failures)';
const STAGE_FILE = /^stage_(\d+)_lifecycle_metrics\.json$/;

const SummarySchema = z.looseObject({ median: num, p95: num, mean: num }).nullish();
const ReportSchema = z.looseObject({
  benchmark_time_seconds: num,
  load_summary: z.looseObject({ count: num, requested_rate: num, concurrency: num }),
  successes: z.looseObject({
    count: num,
    latency: z
      .looseObject({
        request_latency: SummarySchema,
        time_per_output_token: SummarySchema,
        time_to_first_token: SummarySchema,
      })
      .nullish(),
    throughput: z.looseObject({ output_tokens_per_sec: num }).nullish(),
    prompt_tokens: z.looseObject({ mean: num }).nullish(),
    output_tokens: z.looseObject({ total: num, mean: num }).nullish(),
  }),
  failures: z.looseObject({ count: num }).nullish(),
});
type Report = z.infer<typeof ReportSchema>;

/** True for one lifecycle report: inference-perf's three sections. */
export function looksLikeInferencePerf(doc: unknown): boolean {
  return isRecord(doc) && isRecord(doc.load_summary) && isRecord(doc.successes) && 'failures' in doc;
}

const secondsToMs = (s: z.infer<typeof SummarySchema>, key: 'median' | 'p95'): number | null => {
  const v = figure(s?.[key]);
  return v === null ? null : v * 1000;
};

/** True when a report has the server's output token total (inference-perf's output_tokens section). */
const hasServerCounts = (r: Report): boolean => finite(r.successes.output_tokens?.total) !== null;

/** The figures; throughput servebench's (server counts / window) where every report of the series allows it. */
function figuresOf(r: Report, serverCounts: boolean): LevelFigures {
  const lat = r.successes.latency;
  const seconds = finite(r.benchmark_time_seconds);
  const total = finite(r.successes.output_tokens?.total);
  return {
    ...noFigures(),
    throughput: serverCounts
      ? total !== null && seconds !== null && seconds > 0
        ? total / seconds
        : null
      : figure(r.successes.throughput?.output_tokens_per_sec),
    ttftP50: secondsToMs(lat?.time_to_first_token, 'median'),
    ttftP95: secondsToMs(lat?.time_to_first_token, 'p95'),
    tpotP50: secondsToMs(lat?.time_per_output_token, 'median'),
    tpotP95: secondsToMs(lat?.time_per_output_token, 'p95'),
    e2eP50: secondsToMs(lat?.request_latency, 'median'),
    e2eP95: secondsToMs(lat?.request_latency, 'p95'),
  };
}

function loadOf(r: Report, file: string): LevelLoad {
  const conc = finite(r.load_summary.concurrency);
  const rate = finite(r.load_summary.requested_rate);
  if (conc !== null) return { kind: 'concurrency', value: conc };
  if (rate !== null) return { kind: 'rate', value: rate };
  throw new UserError(
    `${file} is an inference-perf report over all stages and records no load: give its stage_N_lifecycle_metrics.json files or the reports folder`,
  );
}

function levelOf(r: Report, file: string, notes: string[], serverCounts: boolean): CompareLevel {
  const load = loadOf(r, file);
  const failed = finite(r.failures?.count) ?? 0;
  if (failed > 0)
    notes.push(`${failed} request(s) failed at ${load.kind} ${load.value}; the figures are over the others`);
  const figures = figuresOf(r, serverCounts);
  const why = "inference-perf's lifecycle reports hold summaries only (per_request reports are not read)";
  const missingRequests: Partial<Record<FigureKey, string>> = {};
  for (const k of Object.keys(figures) as FigureKey[]) missingRequests[k] = why;
  return { load, figures, missingRequests };
}

function parseReport(text: string, file: string): Report {
  const doc = jsonDocument(text);
  if (!looksLikeInferencePerf(doc)) throw notFormat(file, EXPECTED, foundText(text, doc));
  const parsed = ReportSchema.safeParse(doc);
  if (!parsed.success) throw badContent(file, 'an inference-perf lifecycle report', parsed.error);
  return parsed.data;
}

/** What config.yaml beside the reports says: the model, the load type, where output tokens came from. */
async function configBeside(dir: string): Promise<{ model?: string; loadType?: string; serverTokens?: boolean }> {
  const text = await readSiblingText(join(dir, 'config.yaml'));
  if (text === null) return {};
  let c: unknown;
  try {
    c = parseYaml(text, { maxAliasCount: 100 });
  } catch {
    return {};
  }
  const at = (o: unknown, ...path: string[]): unknown =>
    path.reduce<unknown>((v, k) => (isRecord(v) ? v[k] : undefined), o);
  const model = at(c, 'server', 'model_name');
  const loadType = at(c, 'load', 'type');
  const serverTokens = at(c, 'report', 'request_lifecycle', 'use_server_output_tokens');
  return {
    model: typeof model === 'string' ? model : undefined,
    loadType: typeof loadType === 'string' ? loadType : undefined,
    serverTokens: typeof serverTokens === 'boolean' ? serverTokens : undefined,
  };
}

type BesideConfig = Awaited<ReturnType<typeof configBeside>>;

/** Reports (one per stage) as one series; each a level. */
function seriesOf(
  reports: Array<{ report: Report; file: string }>,
  label: string,
  path: string,
  config: BesideConfig,
): CompareSeries {
  const notes: string[] = [];
  const serverCounts = reports.every((r) => hasServerCounts(r.report));
  const levels = reports.map((r) => levelOf(r.report, r.file, notes, serverCounts));
  const first = reports[0]?.report;
  if (config.loadType === 'constant' && levels.some((l) => l.load.kind === 'rate'))
    notes.push("inference-perf sent its rate stages at a constant rate (servebench's are Poisson)");
  if (config.serverTokens === true)
    notes.push("inference-perf was told use_server_output_tokens: its TPOT divides by the server's counts");
  const mean = (v: number | null | undefined): number | undefined =>
    finite(v) === null ? undefined : Math.round(v as number);
  return {
    label,
    source: 'inference-perf',
    path,
    conditions: {
      measuredBy: 'inference-perf',
      model: config.model,
      inputLen: mean(first?.successes.prompt_tokens?.mean),
      outputLen: mean(first?.successes.output_tokens?.mean),
    },
    levels,
    notes,
    figureHint: 'inference-perf writes the percentiles its report config lists (median and p95 by default)',
    definitions: figureSources('inference-perf', {
      ...INFERENCE_PERF_SOURCES,
      ...(serverCounts ? {} : { throughput: INFERENCE_PERF_RATE_SOURCE }),
    }),
  };
}

/** One lifecycle report file: a stage (one level) or a summary over stages (refused: it names no load). */
export async function readInferencePerfFile(text: string, file: string): Promise<CompareSeries[]> {
  const report = parseReport(text, file);
  const stage = STAGE_FILE.exec(basename(file));
  const label = stage ? `${basename(dirname(file))} stage ${stage[1]}` : basename(file).replace(/\.json$/i, '');
  return [seriesOf([{ report, file }], label, file, await configBeside(dirname(file)))];
}

/** The stage reports of an inference-perf reports folder, in stage order; null when it holds none. */
async function stageFiles(dir: string): Promise<string[] | null> {
  const names = await readdir(dir).catch(() => [] as string[]);
  const stages = names
    .map((n) => ({ n, m: STAGE_FILE.exec(n) }))
    .filter((x): x is { n: string; m: RegExpExecArray } => x.m !== null)
    .sort((a, b) => Number(a.m[1]) - Number(b.m[1]));
  return stages.length ? stages.map((s) => join(dir, s.n)) : null;
}

/** True for an inference-perf reports folder (stage_N_lifecycle_metrics.json files in it). */
export async function isInferencePerfFolder(dir: string): Promise<boolean> {
  return (await stageFiles(dir)) !== null;
}

/** An inference-perf reports folder as one series: one level per stage report. */
export async function readInferencePerfFolder(dir: string): Promise<CompareSeries[]> {
  const files = await stageFiles(dir);
  if (!files)
    throw notFormat(dir, 'an inference-perf reports folder (stage_N_lifecycle_metrics.json)', 'no stage report');
  const reports: Array<{ report: Report; file: string }> = [];
  const budget = folderBudget();
  for (const file of files) {
    const text = await readSiblingText(file, budget);
    if (text === null) throw new UserError(`${file} cannot be read: check the reports folder`);
    reports.push({ report: parseReport(text, file), file });
  }
  return [seriesOf(reports, basename(dir), dir, await configBeside(dir))];
}
