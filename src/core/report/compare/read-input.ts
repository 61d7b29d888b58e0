import { stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { decodeRunJson } from '../../../shared/run-record-schema.js';
import type { RunRecord } from '../../../shared/run-record.js';
import { UserError } from '../../errors.js';
import { readTextFile } from '../../bounded-file.js';
import { RUN_FILES } from '../../runs/run-store.js';
import { loadRunFolder, recordSecrets, sanitizeRecord } from '../load-run-folder.js';
import type { RunFolder } from '../load-run-folder.js';
import { readForeignFile, readForeignFolder } from './input-formats.js';
import type { FormatIn } from './input-formats.js';
import { ACCEPTED_INPUTS, parseResultObjects, seriesFromResultObjects } from './read-result-file.js';
import { seriesFromRunFolder } from './read-servebench.js';
import type { CompareSeries } from './types.js';

/**
 * A result file is read whole: past this it is not one vLLM or SGLang writes (a --save-detailed file of
 * 100,000 requests is about 100 MiB), and past V8's string limit (512 MiB) it could not be read at all.
 */
const COMPARE_INPUT_MAX_BYTES = 256 * 2 ** 20;

const REPORT_JSON_WHY =
  'a servebench report --format json file holds the summaries of run.json only (compare the run folder for intervals)';

/** True when a JSON document has the shape of a servebench run record (run.json or its `report --format json` copy). */
function looksLikeRunRecord(value: unknown): boolean {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return false;
  const o = value as Record<string, unknown>;
  return 'schemaVersion' in o && Array.isArray(o.levels) && typeof o.environment === 'object' && 'config' in o;
}

function parseWhole(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A run record with no requests.jsonl beside it, as a run folder without requests or telemetry. */
function recordOnlyFolder(record: RunRecord, file: string): RunFolder {
  const secrets = recordSecrets(record);
  const clean = sanitizeRecord(record, secrets);
  return { dir: dirname(file), record: clean, requests: [], gpu: [], engine: [], client: [], secrets, notes: [] };
}

/** A file holding a run record: its folder when it is a folder's own run.json, its summaries otherwise. */
async function seriesFromRecordFile(text: string, full: string): Promise<CompareSeries[]> {
  const decoded = decodeRunJson(text);
  if ('problem' in decoded) throw new UserError(`${full} is a servebench run record that ${decoded.problem}`);
  const dir = dirname(full);
  const inFolder =
    basename(full) === RUN_FILES.record && (await stat(join(dir, RUN_FILES.requests)).catch(() => null)) !== null;
  if (inFolder) return seriesFromRunFolder(await loadRunFolder(dir), full);
  const measuredBy = `servebench ${decoded.record.environment.servebenchVersion} (report json export)`;
  return seriesFromRunFolder(recordOnlyFolder(decoded.record, full), full, { why: REPORT_JSON_WHY, measuredBy });
}

/** How compare reads its inputs: `formatIn` names the reader of every input that is not a servebench run. */
export interface CompareInputOptions {
  formatIn?: FormatIn;
}

/**
 * One compare input, told apart by its content: a run folder, a run record (its run.json or the file
 * `servebench report --format json` writes), a vLLM --save-result file, an SGLang bench_serving .jsonl, or
 * another tool's results (input-formats.ts: AIPerf, guidellm, inference-perf, llm-d Benchmark Reports).
 */
export async function readCompareInput(path: string, options: CompareInputOptions = {}): Promise<CompareSeries[]> {
  const full = resolve(path);
  const info = await stat(full).catch(() => null);
  if (!info) throw new UserError(`nothing at ${full}: ${ACCEPTED_INPUTS}`);
  if (info.isDirectory())
    return (await readForeignFolder(full, options.formatIn)) ?? seriesFromRunFolder(await loadRunFolder(full), full);
  const text = await readTextFile(full, {
    what: full,
    maxBytes: COMPARE_INPUT_MAX_BYTES,
    expected: 'a run folder or a result file',
  });
  if (looksLikeRunRecord(parseWhole(text))) return seriesFromRecordFile(text, full);
  // A folder's own run.json that is damaged: the folder's reader says so and how to restore it.
  if (basename(full) === RUN_FILES.record) return seriesFromRunFolder(await loadRunFolder(dirname(full)), full);
  const label = basename(full).replace(/\.(jsonl?|json)$/i, '');
  const foreign = await readForeignFile(text, full, label, options.formatIn);
  if (foreign) return foreign;
  return [seriesFromResultObjects(parseResultObjects(text, full), full, label)];
}

/** Every input's series, with labels made unique (two copies of one run keep apart in tables and charts). */
export async function readCompareInputs(
  paths: readonly string[],
  options: CompareInputOptions = {},
): Promise<CompareSeries[]> {
  const all: CompareSeries[] = [];
  for (const p of paths) all.push(...(await readCompareInput(p, options)));
  const seen = new Map<string, number>();
  for (const s of all) {
    const n = (seen.get(s.label) ?? 0) + 1;
    seen.set(s.label, n);
    if (n > 1) s.label = `${s.label} (${basename(s.path)}${n > 2 ? ` #${n}` : ''})`;
  }
  return all;
}
