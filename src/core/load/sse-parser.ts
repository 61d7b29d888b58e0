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
export const DEFAULT_MAX_EVENT_CHARS = 4 << 20;

/**
 * Incremental Server-Sent Events parser (WHATWG rules, tolerant of real servers): lines split across reads,
 * many events per read, CRLF, comments/keep-alives, and lines that are not SSE fields (counted, never fatal).
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
    let nl = text.indexOf('\n');
    if (nl !== -1 && this.pieces.length > 0) {
      // Finish the line begun in earlier reads: joined once, when its end arrives.
      this.pieces.push(text.slice(0, nl));
      const line = this.pieces.join('');
      this.pieces = [];
      this.pendingChars = 0;
      if (line.length > this.maxLine) {
        this.overflow = 'line';
        return;
      }
      const end = line.length > 0 && line.charCodeAt(line.length - 1) === 13 ? line.length - 1 : line.length;
      this.line(line, 0, end, tMs);
      if (this.overflow) return;
      start = nl + 1;
      nl = text.indexOf('\n', start);
    }
    while (nl !== -1) {
      if (nl - start > this.maxLine) {
        this.overflow = 'line';
        return;
      }
      let end = nl;
      if (end > start && text.charCodeAt(end - 1) === 13) end--;
      this.line(text, start, end, tMs);
      if (this.overflow) return;
      start = nl + 1;
      nl = text.indexOf('\n', start);
    }
    // A lone CR line ending is legal SSE but no OpenAI-compatible server sends one; only LF/CRLF are split.
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
      let line = this.pieces.join('');
      this.pieces = [];
      this.pendingChars = 0;
      if (line.endsWith('\r')) line = line.slice(0, -1);
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
      this.addData(buffer.slice(valueStart, end));
      return;
    }
    const colon = buffer.indexOf(':', start);
    const field = colon === -1 || colon > end ? buffer.slice(start, end) : buffer.slice(start, colon);
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
