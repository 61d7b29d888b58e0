import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { UserError } from '../../errors.js';
import { RUN_FILES } from '../../runs/run-store.js';
import { foundText, jsonDocument, notFormat, readSiblingText, withoutImpossible } from './foreign-input.js';
import { looksLikeAiperfCsv, looksLikeAiperfJson, readAiperf } from './read-aiperf.js';
import { looksLikeGuidellm, readGuidellm } from './read-guidellm.js';
import {
  isInferencePerfFolder,
  looksLikeInferencePerf,
  readInferencePerfFile,
  readInferencePerfFolder,
} from './read-inference-perf.js';
import {
  isLlmdReportFolder,
  looksLikeLlmdReport,
  readLlmdReportFile,
  readLlmdReportFolder,
} from './read-llmd-report.js';
import { parseResultObjects, resultKind, seriesFromResultObjects } from './read-result-file.js';
import type { CompareSeries } from './types.js';

/** The formats compare reads from other tools, by the name `--format-in` takes, and what each is. */
export const INPUT_FORMATS = [
  { id: 'vllm', what: 'a vllm bench serve --save-result file' },
  { id: 'sglang', what: 'an sglang bench_serving .jsonl' },
  { id: 'aiperf', what: "an AIPerf profile export (profile_export_aiperf.json or .csv, or AIPerf's artifacts folder)" },
  { id: 'guidellm', what: 'a guidellm benchmarks.json' },
  { id: 'inference-perf', what: 'an inference-perf lifecycle report (stage_N_lifecycle_metrics.json or its folder)' },
  { id: 'llmd-report', what: 'an llm-d Benchmark Report v0.2 (one file, or a folder of benchmark_report*.yaml)' },
] as const;

/** A `--format-in` name. */
export type FormatIn = (typeof INPUT_FORMATS)[number]['id'];

/** `--format-in NAME` checked: the format, or one line naming the names. */
export function parseFormatIn(name: string): FormatIn {
  const f = INPUT_FORMATS.find((x) => x.id === name);
  if (!f)
    throw new UserError(`--format-in must be one of ${INPUT_FORMATS.map((x) => x.id).join(', ')} (got '${name}')`);
  return f.id;
}

const AIPERF_JSON = 'profile_export_aiperf.json';

function vllmOrSglang(text: string, file: string, kind: 'vllm' | 'sglang', label: string): CompareSeries[] {
  const objects = parseResultObjects(text, file);
  const found = resultKind(objects);
  if (found !== kind) {
    const what = INPUT_FORMATS.find((f) => f.id === kind)?.what ?? kind;
    throw notFormat(
      file,
      what,
      found ? `${found === 'vllm' ? 'a vLLM' : 'an SGLang'} result` : foundText(text, objects[0]),
    );
  }
  return [seriesFromResultObjects(objects, file, label)];
}

/** A foreign file's series as its reader makes them (see readForeignFile). */
async function readFileSeries(
  text: string,
  file: string,
  label: string,
  forced?: FormatIn,
): Promise<CompareSeries[] | null> {
  const doc = jsonDocument(text);
  switch (forced) {
    case 'vllm':
    case 'sglang':
      return vllmOrSglang(text, file, forced, label);
    case 'aiperf':
      return readAiperf(text, file);
    case 'guidellm':
      return readGuidellm(doc, file, text);
    case 'inference-perf':
      return readInferencePerfFile(text, file);
    case 'llmd-report':
      return readLlmdReportFile(text, file);
    case undefined:
      break;
  }
  if (looksLikeAiperfJson(doc) || (doc === undefined && looksLikeAiperfCsv(text))) return readAiperf(text, file);
  if (looksLikeGuidellm(doc)) return readGuidellm(doc, file, text);
  if (looksLikeInferencePerf(doc)) return readInferencePerfFile(text, file);
  if (looksLikeLlmdReport(text, doc)) return readLlmdReportFile(text, file);
  return null;
}

/** A foreign folder's series as its reader makes them (see readForeignFolder). */
async function readFolderSeries(dir: string, forced?: FormatIn): Promise<CompareSeries[] | null> {
  if (await stat(join(dir, RUN_FILES.record)).catch(() => null)) return null;
  if (forced === 'inference-perf' || (!forced && (await isInferencePerfFolder(dir))))
    return readInferencePerfFolder(dir);
  if (forced === 'llmd-report' || (!forced && (await isLlmdReportFolder(dir)))) return readLlmdReportFolder(dir);
  if (forced === 'aiperf' || !forced) {
    const file = join(dir, AIPERF_JSON);
    const text = await readSiblingText(file);
    if (text !== null) return readAiperf(text, file);
    if (forced) throw notFormat(dir, INPUT_FORMATS[2].what, `no ${AIPERF_JSON} in it`);
  }
  if (forced) throw notFormat(dir, INPUT_FORMATS.find((f) => f.id === forced)?.what ?? forced, 'a folder');
  return null;
}

/**
 * A file another tool wrote, told apart by its keys (or read as `forced` says): its series with impossible figures
 * left out, or null when it is none of the formats here (a vLLM or SGLang result, read by the caller).
 */
export async function readForeignFile(
  text: string,
  file: string,
  label: string,
  forced?: FormatIn,
): Promise<CompareSeries[] | null> {
  return (await readFileSeries(text, file, label, forced))?.map(withoutImpossible) ?? null;
}

/**
 * A folder another tool wrote (an inference-perf reports folder, a folder of Benchmark Reports, AIPerf's artifacts
 * folder), or null for anything else: a servebench run folder (its run.json) is never read as one of these.
 */
export async function readForeignFolder(dir: string, forced?: FormatIn): Promise<CompareSeries[] | null> {
  return (await readFolderSeries(dir, forced))?.map(withoutImpossible) ?? null;
}
