import type { RequestRecord } from '../../shared/request-record.js';

/**
 * How the tokens of one request reached the client. Chunks of one network read share one timestamp (the client
 * stamps each read), so distinct timestamps are distinct reads.
 */
export interface StreamArrival {
  /** Token-bearing chunks. */
  chunks: number;
  /** Distinct network reads that carried them. */
  reads: number;
  /** Chunks in the fullest read. */
  largestRead: number;
  /** First to last token-bearing read (ms). */
  spanMs: number;
  /** Tokens that came after the first read (per-chunk counts; 1 per chunk where the server gave none). */
  tokensAfterFirstRead: number;
}

/** A proxy replaying a buffered response: its tokens came this many times faster than the server's whole output. */
export const REPLAY_RATE_FACTOR = 10;
/** ... and within this share of E2E (a streamed request at c=1 behind a long prefill keeps a larger share). */
export const BUFFERED_SPAN_SHARE = 0.05;

/** Reads, span and tokens of one request's token-bearing chunks (chunks are in arrival order). */
export function streamArrival(record: RequestRecord): StreamArrival {
  const chunks = record.chunks;
  let reads = 0;
  let largestRead = 0;
  let run = 0;
  let tokensAfterFirstRead = 0;
  for (let i = 0; i < chunks.length; i++) {
    const [t, tokens] = chunks[i]!;
    if (i === 0 || t !== chunks[i - 1]![0]) {
      reads++;
      run = 0;
    }
    run++;
    largestRead = Math.max(largestRead, run);
    if (t !== chunks[0]![0]) tokensAfterFirstRead += Math.max(tokens, 0);
  }
  const spanMs = chunks.length > 0 ? chunks[chunks.length - 1]![0] - chunks[0]![0] : 0;
  return { chunks: chunks.length, reads, largestRead, spanMs, tokensAfterFirstRead };
}

/**
 * The level's output rate while it had requests in flight (tokens/ms): output tokens of the ok requests over the
 * union of their send..end intervals (idle time between requests, as in a slow open loop, does not dilute it). No
 * single request can receive tokens faster than the server produces them for everyone, so this bounds a real
 * stream's pace from above. Null when nothing was produced.
 */
export function levelOutputRate(records: readonly RequestRecord[]): number | null {
  const spans = records
    .filter((r) => r.ok && r.endMs !== null && r.endMs > r.sendMs)
    .map((r) => ({ start: r.sendMs, end: r.endMs!, tokens: r.nOut }))
    .sort((a, b) => a.start - b.start);
  let busyMs = 0;
  let tokens = 0;
  let curStart = -Infinity;
  let curEnd = -Infinity;
  for (const s of spans) {
    tokens += s.tokens;
    if (s.start > curEnd) {
      if (curEnd > curStart) busyMs += curEnd - curStart;
      curStart = s.start;
      curEnd = s.end;
    } else {
      curEnd = Math.max(curEnd, s.end);
    }
  }
  if (curEnd > curStart) busyMs += curEnd - curStart;
  return busyMs > 0 && tokens > 0 ? tokens / busyMs : null;
}

/** Why a request counts as one burst rather than a stream (null: it streamed). */
export type BurstReason = 'one-read' | 'most-in-one-read' | 'faster-than-server';

/**
 * Why one request's tokens count as a burst, judged by how they arrived, never by their share of E2E alone (under
 * queueing E2E is mostly wait, and a fast server streams its whole output in a small share of it):
 * - 'one-read': several chunks, all in one network read;
 * - 'most-in-one-read': one read carried more than half of 3 or more chunks (a proxy flushing its buffer at the
 *   end; a client that merely lags merges a few chunks, and a diffusion model sends one chunk per block);
 * - 'faster-than-server': the tokens after the first read came over 10x faster than the server's whole output rate
 *   (levelRate, tokens/ms) and within 5 % of E2E: a proxy replaying a buffered response event by event.
 * levelRate defaults to the record's own rate (as if it were alone on the server).
 */
export function burstReason(record: RequestRecord, levelRate?: number | null): BurstReason | null {
  const a = streamArrival(record);
  if (a.chunks <= 1) return null;
  if (a.reads === 1) return 'one-read';
  if (a.chunks >= 3 && a.largestRead * 2 > a.chunks) return 'most-in-one-read';
  const rate = levelRate === undefined ? levelOutputRate([record]) : levelRate;
  const e2e = record.endMs !== null ? record.endMs - record.sendMs : null;
  if (rate === null || e2e === null || e2e <= 0 || a.spanMs <= 0) return null;
  const pace = a.tokensAfterFirstRead / a.spanMs;
  return pace > REPLAY_RATE_FACTOR * rate && a.spanMs / e2e < BUFFERED_SPAN_SHARE ? 'faster-than-server' : null;
}

/** How a request's tokens arrived: over time, all in one chunk, or in one burst (see burstReason). */
export function streamingShape(
  record: RequestRecord,
  levelRate?: number | null,
): 'streamed' | 'single-chunk' | 'buffered' {
  if (record.chunks.length <= 1) return 'single-chunk';
  return burstReason(record, levelRate) === null ? 'streamed' : 'buffered';
}
