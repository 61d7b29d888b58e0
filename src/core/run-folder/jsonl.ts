import { createInterface } from 'node:readline';
import type { z } from 'zod';
import { zodProblem } from '../../shared/run-record-schema.js';
import { FileReadError, openRegularFile } from '../bounded-file.js';

// The one policy for a run folder's JSONL lines: each line is read against its schema; a line that is not
// JSON or not the schema is counted and named (its number and why), never silently dropped; a last line
// without its newline that does not parse is a write cut short (a crash) and is reported as such.

/** Lines named in a report: enough to find them, few enough to read. */
const BAD_LINE_EXAMPLES = 3;

/** A line that could not be read: its number (1-based) and why. */
interface BadLine {
  line: number;
  problem: string;
}

/** What reading one JSONL file found. */
export interface JsonlReport {
  /** The file's name in its folder: `requests.jsonl`. */
  file: string;
  /** False when the folder has no such file (nothing was recorded there). */
  present: boolean;
  /** The file's size when it was opened; what was read (a file still growing is read to this size). */
  bytes: number;
  /** Non-empty lines seen. */
  lines: number;
  /** Lines that matched the schema and were handed on. */
  read: number;
  /** Lines that are not JSON or not the schema (the cut-short last line is not among them). */
  bad: number;
  /** The first of those, by line number. */
  badExamples: BadLine[];
  /** The number of the last line when it was cut short (no newline, not JSON); null when the file ends whole. */
  cutShortLine: number | null;
}

/** What to read, and what to call it in a message. */
export interface JsonlSource {
  path: string;
  /** The file's name in its folder: `requests.jsonl`. */
  file: string;
  /** How a message names it: `requests.jsonl in runs/a`. */
  what: string;
}

const emptyReport = (file: string, present: boolean, bytes: number): JsonlReport => ({
  file,
  present,
  bytes,
  lines: 0,
  read: 0,
  bad: 0,
  badExamples: [],
  cutShortLine: null,
});

function decodeLine<S extends z.ZodType>(text: string, schema: S): { value: z.infer<S> } | { problem: string } {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { problem: 'not JSON' };
  }
  const parsed = schema.safeParse(json);
  return parsed.success ? { value: parsed.data } : { problem: zodProblem(parsed.error) };
}

/** A line that read: its value, number (1-based) and size in bytes. */
export interface JsonlLine<T> {
  value: T;
  line: number;
  bytes: number;
}

/**
 * Reads a JSONL file line by line against `schema`, yielding each line that reads (no line is kept here, so a
 * file of any size reads in constant memory), and returns what it found. A missing file reads as no lines
 * (`present` false); a FIFO or device is refused in one line. It stops at the size the file had when opened.
 */
export async function* readJsonl<S extends z.ZodType>(
  source: JsonlSource,
  schema: S,
): AsyncGenerator<JsonlLine<z.infer<S>>, JsonlReport, undefined> {
  let handle;
  try {
    handle = await openRegularFile(source.path, { what: source.what, expected: 'the file the run wrote' });
  } catch (error) {
    if (error instanceof FileReadError && error.refusal === 'missing') return emptyReport(source.file, false, 0);
    throw error;
  }
  try {
    const { size } = await handle.stat();
    const report = emptyReport(source.file, true, size);
    if (size === 0) return report;
    const last = Buffer.alloc(1);
    await handle.read(last, 0, 1, size - 1);
    const endsWhole = last[0] === 0x0a;
    const input = handle.createReadStream({ encoding: 'utf8', start: 0, end: size - 1, autoClose: false });
    const reader = createInterface({ input, crlfDelay: Infinity });
    const take = (text: string, line: number, isLast: boolean): JsonlLine<z.infer<S>> | null => {
      const decoded = decodeLine(text, schema);
      if ('value' in decoded) {
        report.read++;
        return { value: decoded.value, line, bytes: Buffer.byteLength(text) };
      }
      if (isLast && !endsWhole && decoded.problem === 'not JSON') report.cutShortLine = line;
      else {
        report.bad++;
        if (report.badExamples.length < BAD_LINE_EXAMPLES) report.badExamples.push({ line, problem: decoded.problem });
      }
      return null;
    };
    try {
      let lineNo = 0;
      let pending: { text: string; line: number } | null = null;
      for await (const text of reader) {
        lineNo++;
        if (text.trim().length === 0) continue;
        report.lines++;
        // One line behind: only the last line of the file may be a write cut short.
        const ready = pending ? take(pending.text, pending.line, false) : null;
        pending = { text, line: lineNo };
        if (ready) yield ready;
      }
      const lastLine = pending ? take(pending.text, pending.line, true) : null;
      if (lastLine) yield lastLine;
    } finally {
      reader.close();
      input.destroy();
    }
    return report;
  } finally {
    await handle.close().catch(() => undefined);
  }
}

/** readJsonl with a callback: each line that reads to `onLine`, then what reading found. */
export async function streamJsonl<S extends z.ZodType>(
  source: JsonlSource,
  schema: S,
  onLine: (value: z.infer<S>, line: number, bytes: number) => void,
): Promise<JsonlReport> {
  const lines = readJsonl(source, schema);
  for (;;) {
    const next = await lines.next();
    if (next.done) return next.value;
    onLine(next.value.value, next.value.line, next.value.bytes);
  }
}

/** The report's problems in one line each (none when every line read), for a reader's notes. */
export function jsonlNotes(report: JsonlReport): string[] {
  const notes: string[] = [];
  if (report.bad > 0) {
    const named = report.badExamples.map((b) => `line ${b.line}: ${b.problem}`).join('; ');
    const more = report.bad > report.badExamples.length ? '; …' : '';
    notes.push(`${report.bad} line(s) of ${report.file} could not be read and were left out (${named}${more})`);
  }
  if (report.cutShortLine !== null)
    notes.push(
      `the last line of ${report.file} (line ${report.cutShortLine}) was cut short (a write interrupted) and was left out`,
    );
  return notes;
}
