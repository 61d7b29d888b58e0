import { basename, dirname } from 'node:path';
import { z } from 'zod';
import type { ZodError } from 'zod';
import { zodProblem } from '../../../shared/run-record-schema.js';
import { FileReadError, readTextFile } from '../../bounded-file.js';
import { UserError } from '../../errors.js';
import { parsePythonJson } from './read-result-file.js';
import { FIGURES } from './types.js';
import type { CompareSeries, FigureKey } from './types.js';

/**
 * The most compare reads of one other tool's file: a guidellm benchmarks.json keeping every request of a long sweep
 * is the largest of them (tens of MiB); past V8's string limit a file could not be read at all.
 */
const FOREIGN_FILE_MAX_BYTES = 256 * 2 ** 20;

/** What a folder's files may hold together: a folder of a million small reports costs no more than one big one. */
export interface ReadBudget {
  bytesLeft: number;
}

/** A budget of FOREIGN_FILE_MAX_BYTES for the files of one folder. */
export function folderBudget(): ReadBudget {
  return { bytesLeft: FOREIGN_FILE_MAX_BYTES };
}

/**
 * A file beside the one named (an AIPerf JSON beside its CSV, a reports folder's stage files), or null when it is
 * not a readable regular file; past the cap (or the folder's budget) refused in one line.
 */
export async function readSiblingText(path: string, budget?: ReadBudget): Promise<string | null> {
  const cap = Math.min(FOREIGN_FILE_MAX_BYTES, budget?.bytesLeft ?? Infinity);
  try {
    const text = await readTextFile(path, { what: path, maxBytes: cap });
    if (budget) budget.bytesLeft -= Buffer.byteLength(text);
    return text;
  } catch (error) {
    if (!(error instanceof FileReadError)) throw error;
    if (error.refusal === 'too-large')
      throw new UserError(
        `${path} takes its folder past ${FOREIGN_FILE_MAX_BYTES / 2 ** 20} MiB, the most compare reads of one input: give fewer files`,
      );
    // Not there, not a regular file (a FIFO in the folder), unreadable: not one of the tool's files.
    return null;
  }
}

/** A file's text as one JSON document (Python's bare Infinity and NaN read), or undefined. */
export function jsonDocument(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    // Only text JSON refuses gets the slower pass that reads Python's bare Infinity and NaN.
  }
  try {
    return parsePythonJson(text.trim());
  } catch {
    return undefined;
  }
}

/** A JSON object (not an array, not null). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return !!value && typeof value === 'object' && !Array.isArray(value);
}

/** What a document is, for a refusal: "a JSON object with keys a, b, c", "CSV with header Metric,avg". */
export function foundText(text: string, doc: unknown): string {
  if (isRecord(doc)) {
    const keys = Object.keys(doc);
    const shown = keys.slice(0, 6).join(', ');
    return keys.length
      ? `an object with keys ${shown}${keys.length > 6 ? ` and ${keys.length - 6} more` : ''}`
      : 'an empty object';
  }
  if (Array.isArray(doc)) return `a JSON array of ${doc.length}`;
  const first = (text.trimStart().split('\n')[0] ?? '').slice(0, 60);
  return first ? `text starting "${first.replace(/[^\x20-\x7e]/g, '?')}"` : 'an empty file';
}

/** The one line refusing a file that is not the format asked for. */
export function notFormat(file: string, expected: string, found: string): UserError {
  return new UserError(`${file} is not ${expected}: found ${found}`);
}

/** The one line refusing a file of the right format whose content does not hold (zod's first problem). */
export function badContent(file: string, expected: string, error: ZodError): UserError {
  return new UserError(`${file} is ${expected} that compare cannot read (${zodProblem(error)})`);
}

/**
 * A number in another tool's file: any JSON or YAML number, Infinity (1e400, YAML's .inf) and NaN included, so one
 * impossible figure is named and left out (withoutImpossible) instead of refusing the whole file.
 */
export const num = z.custom<number>((v) => typeof v === 'number', { message: 'expected a number' }).nullish();

/** A figure as the file gives it (a number, possibly one no measurement gives), or null. */
export function figure(v: unknown): number | null {
  return typeof v === 'number' ? v : null;
}

/** Milliseconds from a duration in the unit a tool names ('ms', 's', 'sec', 'ns', 'us'); null for another unit. */
export function toMs(value: number | null | undefined, unit: string): number | null {
  if (value === null || value === undefined) return null;
  const factor: Record<string, number> = { ns: 1e-6, us: 1e-3, ms: 1, s: 1000, sec: 1000 };
  const f = factor[unit.replace(/\/tokens?$/, '')];
  return f === undefined ? null : value * f;
}

/** A label for a series: the file's name, or its folder's where the file has the tool's fixed name. */
export function labelOf(file: string, fixedNames: readonly string[]): string {
  const name = basename(file);
  if (fixedNames.includes(name)) return basename(dirname(file));
  return name.replace(/\.(jsonl?|json|ya?ml|csv)$/i, '');
}

/** A number or null, never NaN or ±Infinity (an impossible figure is named and left out, never printed). */
export function finite(v: unknown): number | null {
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

/**
 * Another tool's series with what no measurement can be left out, each named in a note: a negative or non-finite
 * figure, a p95 below its p50 (both go), a level at a load of zero or less (the level goes).
 */
export function withoutImpossible(series: CompareSeries): CompareSeries {
  const notes = [...series.notes];
  const levels = series.levels.filter((l) => {
    if (Number.isFinite(l.load.value) && l.load.value > 0) return true;
    notes.push(`a level at ${l.load.kind} ${l.load.value} is no load: left out`);
    return false;
  });
  if (levels.length === 0) throw new UserError(`${series.path} holds no level at a load above zero`);
  for (const l of levels) {
    const where = `${l.load.kind} ${l.load.value}`;
    const figures = { ...l.figures };
    for (const f of FIGURES) {
      const v = figures[f.key] ?? null;
      if (v !== null && !(Number.isFinite(v) && v >= 0)) {
        notes.push(`${f.label} at ${where} was ${v}, which no measurement gives: left out`);
        figures[f.key] = null;
      }
    }
    for (const [p50, p95] of PAIRS) {
      const a = figures[p50] ?? null;
      const b = figures[p95] ?? null;
      if (a !== null && b !== null && b < a * (1 - 1e-9)) {
        notes.push(`${FIGURES.find((f) => f.key === p95)?.label} at ${where} was below its p50: both left out`);
        figures[p50] = null;
        figures[p95] = null;
      }
    }
    l.figures = figures;
  }
  return { ...series, levels, notes };
}

/** Each latency's percentiles, lower then higher (the registry lists them in that order). */
const PAIRS: Array<[FigureKey, FigureKey]> = FIGURES.flatMap((f, i): Array<[FigureKey, FigureKey]> => {
  const next = FIGURES[i + 1];
  return f.quantity && next && next.quantity === f.quantity ? [[f.key, next.key]] : [];
});
