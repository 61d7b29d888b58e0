import { StringDecoder } from 'node:string_decoder';

/** Receives one dispatched SSE event: its joined data lines and the time of the read that completed it. */
export type SseEventHandler = (data: string, tMs: number) => void;

/**
 * Incremental Server-Sent Events parser (WHATWG rules, tolerant of real servers): lines split across reads,
 * many events per read, CRLF, comments/keep-alives, and lines that are not SSE fields (counted, never fatal).
 */
export class SseParser {
  /** Lines that were neither a known SSE field, a comment nor blank. */
  unknownLines = 0;
  /** Comment / keep-alive lines (`: ping`). */
  commentLines = 0;
  private readonly decoder = new StringDecoder('utf8');
  private pending = '';
  private data: string[] = [];
  private readonly onEvent: SseEventHandler;

  constructor(onEvent: SseEventHandler) {
    this.onEvent = onEvent;
  }

  /** Feeds one network read; tMs is when the read arrived (taken before parsing). */
  push(chunk: Buffer | string, tMs: number): void {
    const text = typeof chunk === 'string' ? chunk : this.decoder.write(chunk);
    if (text.length === 0) return;
    const buffer = this.pending.length > 0 ? this.pending + text : text;
    let start = 0;
    for (;;) {
      const nl = buffer.indexOf('\n', start);
      if (nl === -1) break;
      let end = nl;
      if (end > start && buffer.charCodeAt(end - 1) === 13) end--;
      this.line(buffer, start, end, tMs);
      start = nl + 1;
    }
    // A lone CR line ending is legal SSE but no OpenAI-compatible server sends one; only LF/CRLF are split.
    this.pending = start === 0 ? buffer : buffer.slice(start);
  }

  /** End of stream: a last event without its blank line is still dispatched. */
  end(tMs: number): void {
    const rest = this.decoder.end();
    if (rest) this.push(rest, tMs);
    if (this.pending.length > 0) {
      const line = this.pending.endsWith('\r') ? this.pending.slice(0, -1) : this.pending;
      this.pending = '';
      this.line(line, 0, line.length, tMs);
    }
    this.dispatch(tMs);
  }

  private line(buffer: string, start: number, end: number, tMs: number): void {
    if (end === start) {
      this.dispatch(tMs);
      return;
    }
    const first = buffer.charCodeAt(start);
    if (first === 58 /* : */) {
      this.commentLines++;
      return;
    }
    // Fast path for the line every token comes on.
    if (buffer.startsWith('data:', start)) {
      const valueStart = buffer.charCodeAt(start + 5) === 32 ? start + 6 : start + 5;
      this.data.push(buffer.slice(valueStart, end));
      return;
    }
    const colon = buffer.indexOf(':', start);
    const field = colon === -1 || colon > end ? buffer.slice(start, end) : buffer.slice(start, colon);
    if (field === 'event' || field === 'id' || field === 'retry' || field === 'data') {
      if (field === 'data') this.data.push('');
      return;
    }
    this.unknownLines++;
  }

  private dispatch(tMs: number): void {
    if (this.data.length === 0) return;
    const data = this.data.length === 1 ? (this.data[0] as string) : this.data.join('\n');
    this.data = [];
    this.onEvent(data, tMs);
  }
}
