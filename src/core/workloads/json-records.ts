import { UserError } from '../errors.js';
import { FileReadError, openRegularFile } from '../bounded-file.js';

/** One JSON value of a workload file, and where it was: its 1-based line (JSONL) or entry (JSON array). */
export interface JsonRecord {
  value: unknown;
  /** 0-based position among the file's records (recorded per request as sourceIndex). */
  index: number;
  /** "line 12" or "entry 12", for error messages. */
  where: string;
}

/** Past this one line (or array entry) is not a prompt but a broken or hostile file. */
export const MAX_RECORD_BYTES = 16 << 20;
const CHUNK = 1 << 20;

export interface ReadRecordsOptions {
  /** The flag that named the file, for messages (`--prompts`). */
  flag: string;
  /** Stop after this many records (a huge dataset is read only as far as the run needs). */
  max?: number;
}

/** Why a workload file cannot be opened, in one line with the fix. */
function unreadable(flag: string, path: string, error: unknown): UserError {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  if (code === 'ENOENT' || code === 'ENOTDIR')
    return new UserError(`cannot read ${flag} ${path}: no such file (check the path)`);
  if (code === 'EACCES' || code === 'EPERM')
    return new UserError(`cannot read ${flag} ${path}: permission denied (make it readable to this user)`);
  return new UserError(`cannot read ${flag} ${path}: ${(error as Error)?.message ?? String(error)} (check the path)`);
}

/**
 * Reads a JSONL file (one value per line; blank lines skipped) or a JSON array (ShareGPT's form), streaming, so
 * that a 600 MB dataset is read only up to `max` records and never held as one string. Every problem is one
 * UserError naming the file, the line and the fix: not a regular file, binary, HTML, a line past 16 MiB, bad JSON.
 */
export async function readJsonRecords(path: string, options: ReadRecordsOptions): Promise<JsonRecord[]> {
  const { flag } = options;
  const max = options.max ?? Infinity;
  // Opened first, then checked on the descriptor: a FIFO or device may block or never end.
  const handle = await openRegularFile(path, { what: `${flag} ${path}`, expected: 'a JSONL or JSON file' }).catch(
    (error: unknown) => {
      if (error instanceof FileReadError && error.refusal === 'not-regular')
        throw new UserError(`${flag} ${path} is not a regular file: pass a JSONL or JSON file`);
      throw error instanceof FileReadError
        ? unreadable(flag, path, { code: error.errno, message: error.message })
        : error;
    },
  );
  const size = (await handle.stat()).size;
  if (size === 0) {
    await handle.close();
    throw new UserError(`${flag} ${path} is empty: it needs one JSON object per line`);
  }
  const records: JsonRecord[] = [];
  const decoder = new TextDecoder('utf-8');
  const buffer = Buffer.alloc(CHUNK);
  let mode: 'unknown' | 'lines' | 'array' | 'done' = 'unknown';
  // JSONL: the current line; array: the current element's text.
  let pending = '';
  let line = 1;
  let entry = 0;
  // Array scanner state.
  let depth = 0;
  let inString = false;
  let escaped = false;
  const push = (text: string, where: string): void => {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      const why = (error as Error).message.split('\n')[0];
      throw new UserError(`${flag} ${path}: ${where} is not valid JSON (${why}): fix or remove that line`);
    }
    records.push({ value, index: records.length, where });
    if (records.length >= max) mode = 'done';
  };
  const tooLong = (where: string): UserError =>
    new UserError(
      `${flag} ${path}: ${where} is longer than ${MAX_RECORD_BYTES >> 20} MiB: not a prompt; check the file is JSONL`,
    );
  const scanLines = (text: string): void => {
    let start = 0;
    for (;;) {
      const nl = text.indexOf('\n', start);
      if (nl < 0) break;
      const one = pending + text.slice(start, nl);
      pending = '';
      if (one.trim() !== '') push(one, `line ${line}`);
      line++;
      start = nl + 1;
      if (mode === 'done') return;
    }
    pending += text.slice(start);
    if (pending.length > MAX_RECORD_BYTES) throw tooLong(`line ${line}`);
  };
  const scanArray = (text: string): void => {
    let from = 0;
    for (let i = 0; i < text.length; i++) {
      const c = text[i];
      if (c === '\n') line++;
      if (inString) {
        if (escaped) escaped = false;
        else if (c === '\\') escaped = true;
        else if (c === '"') inString = false;
        continue;
      }
      if (c === '"') inString = true;
      else if (c === '[' || c === '{') {
        depth++;
        // The array's own bracket opens it; elements start after it.
        if (depth === 1) from = i + 1;
      } else if (c === ']' || c === '}') {
        depth--;
        if (depth === 0) {
          const last = (pending + text.slice(from, i)).trim();
          pending = '';
          if (last !== '') push(last, `entry ${++entry}`);
          mode = 'done';
          return;
        }
      } else if (c === ',' && depth === 1) {
        const one = (pending + text.slice(from, i)).trim();
        pending = '';
        push(one, `entry ${++entry}`);
        from = i + 1;
        if (mode === 'done') return;
      }
    }
    pending += text.slice(from);
    if (pending.length > MAX_RECORD_BYTES) throw tooLong(`entry ${entry + 1}`);
  };
  try {
    let first = true;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, CHUNK, null);
      if (bytesRead === 0) break;
      const bytes = buffer.subarray(0, bytesRead);
      if (bytes.includes(0)) throw new UserError(`${flag} ${path} is a binary file, not JSONL: pass a text file`);
      let text = decoder.decode(bytes, { stream: true });
      if (first) {
        first = false;
        text = text.replace(/^\uFEFF/, '');
      }
      // The first character past leading white space (which may fill whole chunks) tells the form.
      if (mode === 'unknown') {
        const lead = text.trimStart()[0];
        if (lead === '<') {
          throw new UserError(
            `${flag} ${path} is HTML, not JSONL (a web page saved instead of the raw file?): download the raw file`,
          );
        }
        if (lead === '[') mode = 'array';
        else if (lead === '{') mode = 'lines';
        else if (lead !== undefined) {
          throw new UserError(`${flag} ${path} is not JSONL or a JSON array: each line must be a JSON object`);
        } else line += text.split('\n').length - 1;
      }
      if (mode === 'lines') scanLines(text);
      else if (mode === 'array') scanArray(text);
      if ((mode as string) === 'done') break;
    }
    const rest = pending + decoder.decode();
    if (mode === 'lines' && rest.trim() !== '') push(rest, `line ${line}`);
    if (mode === 'array')
      throw new UserError(`${flag} ${path}: the JSON array never closes: the file is cut short; download it again`);
  } finally {
    await handle.close();
  }
  if (records.length === 0) throw new UserError(`${flag} ${path} has no records: it needs one JSON object per line`);
  return records;
}
