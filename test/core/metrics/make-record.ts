import type { RequestRecord } from '../../../src/shared/request-record.js';

/** A measured, ok request record with neutral defaults; override what a test is about. */
export function makeRecord(over: Partial<RequestRecord> = {}): RequestRecord {
  return {
    id: 0,
    requestTag: 'r-0',
    levelIndex: 0,
    round: 0,
    warmup: false,
    sendMs: 0,
    firstTokenMs: null,
    endMs: null,
    chunks: [],
    nOut: 0,
    nOutSource: 'server',
    chunkTokensSource: 'server',
    clientChunkCount: 0,
    nIn: 8,
    expectedIn: 8,
    expectedOut: 4,
    finishReason: 'length',
    ok: true,
    malformedLines: 0,
    ...over,
  };
}

/** Options of a regularly streamed request. */
export interface StreamShape {
  sendMs?: number;
  ttftMs?: number;
  gapMs?: number;
  chunks?: number;
  tokensPerChunk?: number;
  /** From the last chunk to the end of the stream. */
  tailMs?: number;
}

/** An ok request streaming `chunks` chunks of `tokensPerChunk` tokens, `gapMs` apart, after `ttftMs`. */
export function streamed(shape: StreamShape = {}, over: Partial<RequestRecord> = {}): RequestRecord {
  const { sendMs = 0, ttftMs = 100, gapMs = 10, chunks = 4, tokensPerChunk = 1, tailMs = 0 } = shape;
  const times = Array.from({ length: chunks }, (_, i) => sendMs + ttftMs + i * gapMs);
  const nOut = chunks * tokensPerChunk;
  return makeRecord({
    sendMs,
    firstTokenMs: times[0] ?? null,
    endMs: (times[times.length - 1] ?? sendMs) + tailMs,
    chunks: times.map((t) => [t, tokensPerChunk]),
    nOut,
    expectedOut: nOut,
    clientChunkCount: chunks,
    ...over,
  });
}

/** A failed request (no tokens), sent at sendMs and ended at endMs. */
export function failed(
  sendMs: number,
  endMs: number | null,
  errorKind: string,
  over: Partial<RequestRecord> = {},
): RequestRecord {
  return makeRecord({ sendMs, endMs, ok: false, errorKind, error: errorKind, finishReason: null, nIn: null, ...over });
}
