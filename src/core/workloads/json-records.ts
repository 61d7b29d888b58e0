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
const MAX_RECORD_BYTES = 16 << 20;
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

/** The records of one file as its text arrives in chunks: JSONL lines, or the elements of one JSON array. */
class RecordScanner {
  readonly records: JsonRecord[] = [];
  mode: 'unknown' | 'lines' | 'array' | 'done' = 'unknown';
  // JSONL: the current line; array: the current element's text.
  private pending = '';
  private line = 1;
  private entry = 0;
  // Array scanner state.
  private depth = 0;
  private inString = false;
  private escaped = false;
  private readonly name: string;
  private readonly max: number;

  constructor(flag: string, path: string, max: number) {
    this.name = `${flag} ${path}`;
    this.max = max;
  }

  /** One chunk of decoded text (the first one without its byte-order mark). */
  take(text: string): void {
    // The first character past leading white space (which may fill whole chunks) tells the form.
    if (this.mode === 'unknown') this.detect(text);
    if (this.mode === 'lines') this.scanLines(text);
    else if (this.mode === 'array') this.scanArray(text);
  }

  /** The file ended; rest is what the decoder still held. */
  end(rest: string): void {
    const last = this.pending + rest;
    if (this.mode === 'lines' && last.trim() !== '') this.push(last, `line ${this.line}`);
    if (this.mode === 'array')
      throw new UserError(`${this.name}: the JSON array never closes: the file is cut short; download it again`);
  }

  private detect(text: string): void {
    const lead = text.trimStart()[0];
    if (lead === '<') {
      throw new UserError(
        `${this.name} is HTML, not JSONL (a web page saved instead of the raw file?): download the raw file`,
      );
    }
    if (lead === '[') this.mode = 'array';
    else if (lead === '{') this.mode = 'lines';
    else if (lead !== undefined) {
      throw new UserError(`${this.name} is not JSONL or a JSON array: each line must be a JSON object`);
    } else this.line += text.split('\n').length - 1;
  }

  private push(text: string, where: string): void {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      const why = (error as Error).message.split('\n')[0];
      throw new UserError(`${this.name}: ${where} is not valid JSON (${why}): fix or remove that line`);
    }
    this.records.push({ value, index: this.records.length, where });
    if (this.records.length >= this.max) this.mode = 'done';
  }

  private tooLong(where: string): UserError {
    return new UserError(
      `${this.name}: ${where} is longer than ${MAX_RECORD_BYTES >> 20} MiB: not a prompt; check the file is JSONL`,
    );
  }

  private scanLines(text: string): void {
    let start = 0;
    for (;;) {
      const nl = text.indexOf('\n', start);
      if (nl < 0) break;
      const one = this.pending + text.slice(start, nl);
      this.pending = '';
      if (one.trim() !== '') this.push(one, `line ${this.line}`);
      this.line++;
      start = nl + 1;
      if (this.mode === 'done') return;
    }
    this.pending += text.slice(start);
    if (this.pending.length > MAX_RECORD_BYTES) throw this.tooLong(`line ${this.line}`);
  }

  private scanArray(text: string): void {
    let from = 0;
    for (let i = 0; i < text.length; i++) {
      const c = text[i];
      if (c === '\n') this.line++;
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (c === '\\') this.escaped = true;
        else if (c === '"') this.inString = false;
        continue;
      }
      if (c === '"') this.inString = true;
      else if (c === '[' || c === '{') {
        this.depth++;
        // The array's own bracket opens it; elements start after it.
        if (this.depth === 1) from = i + 1;
      } else if (c === ']' || c === '}') {
        this.depth--;
        if (this.depth === 0) {
          const last = (this.pending + text.slice(from, i)).trim();
          this.pending = '';
          if (last !== '') this.push(last, `entry ${++this.entry}`);
          this.mode = 'done';
          return;
        }
      } else if (c === ',' && this.depth === 1) {
        const one = (this.pending + text.slice(from, i)).trim();
        this.pending = '';
        this.push(one, `entry ${++this.entry}`);
        from = i + 1;
        if (this.mode === 'done') return;
      }
    }
    this.pending += text.slice(from);
    if (this.pending.length > MAX_RECORD_BYTES) throw this.tooLong(`entry ${this.entry + 1}`);
  }
}

/**
 * Reads a JSONL file (one value per line; blank lines skipped) or a JSON array (ShareGPT's form), streaming, so
 * that a 600 MB dataset is read only up to `max` records and never held as one string. Every problem is one
 * UserError naming the file, the line and the fix: not a regular file, binary, HTML, a line past 16 MiB, bad JSON.
 */
export async function readJsonRecords(path: string, options: ReadRecordsOptions): Promise<JsonRecord[]> {
  const { flag } = options;
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
  const scanner = new RecordScanner(flag, path, options.max ?? Infinity);
  const decoder = new TextDecoder('utf-8');
  const buffer = Buffer.alloc(CHUNK);
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
      scanner.take(text);
      if (scanner.mode === 'done') break;
    }
    scanner.end(decoder.decode());
  } finally {
    await handle.close();
  }
  const records = scanner.records;
  if (records.length === 0) throw new UserError(`${flag} ${path} has no records: it needs one JSON object per line`);
  return records;
}
