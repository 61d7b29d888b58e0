import { StringDecoder } from 'node:string_decoder';

/** Receives one dispatched SSE event: its joined data lines and the time of the read that completed it. */
export type SseEventHandler = (data: string, tMs: number) => void;

/** Limits on what one server may make the parser hold (characters; a server controls both). */
export interface SseLimits {
  /** Longest line kept; a longer one stops the parser with overflow 'line'. */
  maxLineChars?: number;
  /** Most data characters one event may gather before its blank line; past it, overflow 'event'. */
  maxEventChars?: number;
}

/** 1 MiB: a token chunk is under 1 KB; a line this long is a broken or hostile server. */
export const DEFAULT_MAX_LINE_CHARS = 1 << 20;
const DEFAULT_MAX_EVENT_CHARS = 4 << 20;

/**
 * Incremental Server-Sent Events parser (WHATWG rules, tolerant of real servers): lines split across reads,
 * many events per read, LF, CRLF and lone CR line ends (a CRLF may be split between reads), one leading UTF-8 BOM
 * stripped, comments/keep-alives, and lines that are not SSE fields (counted, never fatal).
 * Linear in the input: an unfinished line is kept as a list of pieces and only new bytes are searched.
 */
export class SseParser {
  /** Lines that were neither a known SSE field, a comment nor blank. */
  unknownLines = 0;
  /** Comment / keep-alive lines (`: ping`). */
  commentLines = 0;
  /** Set once a line or an event outgrew its limit; the parser then ignores all further input. */
  overflow: 'line' | 'event' | null = null;
  private readonly decoder = new StringDecoder('utf8');
  private pieces: string[] = [];
  private pendingChars = 0;
  private data: string[] = [];
  private dataChars = 0;
  /** Some text has been seen: a BOM is only stripped from the very start of the stream. */
  private started = false;
  /** The last read ended on a CR: an LF opening the next read completes that CRLF, it is no empty line. */
  private afterCr = false;
  private readonly onEvent: SseEventHandler;
  private readonly maxLine: number;
  private readonly maxEvent: number;

  constructor(onEvent: SseEventHandler, limits: SseLimits = {}) {
    this.onEvent = onEvent;
    this.maxLine = limits.maxLineChars ?? DEFAULT_MAX_LINE_CHARS;
    this.maxEvent = limits.maxEventChars ?? DEFAULT_MAX_EVENT_CHARS;
  }

  /** Feeds one network read; tMs is when the read arrived (taken before parsing). */
  push(chunk: Buffer | string, tMs: number): void {
    if (this.overflow) return;
    const text = typeof chunk === 'string' ? chunk : this.decoder.write(chunk);
    if (text.length === 0) return;
    let start = 0;
    if (!this.started) {
      this.started = true;
      // The UTF-8 decode of the SSE standard drops one leading BOM; kept, it would hide the first field's name.
      if (text.charCodeAt(0) === 0xfeff) start = 1;
    }
    if (this.afterCr) {
      this.afterCr = false;
      if (text.charCodeAt(start) === 10) start++;
    }
    let lf = text.indexOf('\n', start);
    let cr = text.indexOf('\r', start);
    while (lf !== -1 || cr !== -1) {
      const end = cr === -1 || (lf !== -1 && lf < cr) ? lf : cr;
      if (!this.endLine(text, start, end, tMs)) return;
      start = end + 1;
      if (end === cr) {
        if (start === text.length) this.afterCr = true;
        else if (text.charCodeAt(start) === 10) start++;
      }
      if (lf !== -1 && lf < start) lf = text.indexOf('\n', start);
      if (cr !== -1 && cr < start) cr = text.indexOf('\r', start);
    }
    if (start < text.length) {
      const rest = start === 0 ? text : text.slice(start);
      this.pendingChars += rest.length;
      if (this.pendingChars > this.maxLine) {
        this.pieces = [];
        this.pendingChars = 0;
        this.overflow = 'line';
        return;
      }
      this.pieces.push(rest);
    }
  }

  /** End of stream: a last event without its blank line is still dispatched. */
  end(tMs: number): void {
    if (this.overflow) return;
    const rest = this.decoder.end();
    if (rest) this.push(rest, tMs);
    if (this.overflow) return;
    if (this.pieces.length > 0) {
      const line = this.pieces.join('');
      this.pieces = [];
      this.pendingChars = 0;
      this.line(line, 0, line.length, tMs);
    }
    this.dispatch(tMs);
  }

  /** One line ended at text[end]: it is the pieces kept from earlier reads plus text[start, end). False on overflow. */
  private endLine(text: string, start: number, end: number, tMs: number): boolean {
    if (this.pieces.length > 0) {
      // Finish the line begun in earlier reads: joined once, when its end arrives.
      this.pieces.push(text.slice(start, end));
      const line = this.pieces.join('');
      this.pieces = [];
      this.pendingChars = 0;
      if (line.length > this.maxLine) {
        this.overflow = 'line';
        return false;
      }
      this.line(line, 0, line.length, tMs);
    } else {
      if (end - start > this.maxLine) {
        this.overflow = 'line';
        return false;
      }
      this.line(text, start, end, tMs);
    }
    return this.overflow === null;
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
      this.addData(buffer.slice(valueStart, end));
      return;
    }
    // Searched within the line only: a search running on into later lines would make a read of them quadratic.
    const text = buffer.slice(start, end);
    const colon = text.indexOf(':');
    const field = colon === -1 ? text : text.slice(0, colon);
    if (field === 'event' || field === 'id' || field === 'retry' || field === 'data') {
      if (field === 'data') this.addData('');
      return;
    }
    this.unknownLines++;
  }

  private addData(value: string): void {
    this.dataChars += value.length + 1;
    if (this.dataChars > this.maxEvent) {
      this.data = [];
      this.dataChars = 0;
      this.overflow = 'event';
      return;
    }
    this.data.push(value);
  }

  private dispatch(tMs: number): void {
    if (this.data.length === 0) return;
    const data = this.data.length === 1 ? (this.data[0] as string) : this.data.join('\n');
    this.data = [];
    this.dataChars = 0;
    this.onEvent(data, tMs);
  }
}
