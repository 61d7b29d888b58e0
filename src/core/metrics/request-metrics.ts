import {
  outputCounted,
  requestE2eMs,
  requestTpotMs,
  requestTtftMs,
  usageRejected,
} from '../../shared/request-record.js';
import type { RequestRecord } from '../../shared/request-record.js';

export { outputCounted, usageRejected };

/** Latency figures of one request (ms); null where the request cannot define them. */
export interface RequestMetrics {
  /** First token - send. */
  ttftMs: number | null;
  /** End of stream - send. */
  e2eMs: number | null;
  /** (E2E - TTFT) / (nOut - 1); only for nOut > 1. */
  tpotMs: number | null;
  /** Gaps between consecutive token-bearing chunks. */
  itlMs: number[];
  /** Each gap divided by the tokens in the later chunk (a diffusion block's gap is shared by its tokens). */
  itlPerTokenMs: number[];
  /** Tokens in each token-bearing chunk. */
  tokensPerChunk: number[];
  /** Reasoning streams: first answer token - send (TTFO); null otherwise or when no answer came. */
  ttfoMs: number | null;
}

/** True for a request that counts toward a level's metrics (not a warm-up request). */
export function isMeasured(record: RequestRecord): boolean {
  return !record.warmup && record.round >= 0;
}

/** True for a request the user cancelled (errorKind 'cancelled'): not a server failure, so never counted as one. */
export function isCancelled(record: RequestRecord): boolean {
  return !record.ok && record.errorKind === 'cancelled';
}

/**
 * Derives TTFT, E2E, TPOT, ITL and ITL per token from one record (docs/architecture.md, what is measured). Where the
 * server's output count was impossible, the figures built on it (TPOT, ITL per token, tokens per chunk) are left out.
 */
export function requestMetrics(record: RequestRecord): RequestMetrics {
  const ttftMs = requestTtftMs(record);
  const e2eMs = requestE2eMs(record);
  const counted = outputCounted(record);
  const tpotMs = requestTpotMs(record);
  const itlMs: number[] = [];
  const itlPerTokenMs: number[] = [];
  const tokensPerChunk: number[] = [];
  const chunks = record.chunks;
  for (let i = 0; i < chunks.length; i++) {
    const [timeMs, tokens] = chunks[i]!;
    if (counted) tokensPerChunk.push(tokens);
    if (i === 0) continue;
    const gap = timeMs - chunks[i - 1]![0];
    itlMs.push(gap);
    // A chunk with no counted tokens has no per-token time; leave it out rather than divide by zero.
    if (counted && tokens > 0) itlPerTokenMs.push(gap / tokens);
  }
  const ttfoMs =
    record.firstContentMs === undefined || record.firstContentMs === null
      ? null
      : record.firstContentMs - record.sendMs;
  return { ttftMs, e2eMs, tpotMs, itlMs, itlPerTokenMs, tokensPerChunk, ttfoMs };
}

/** Pooled latency samples of the ok, measured requests among records. */
export interface PooledLatencies {
  ttftMs: number[];
  e2eMs: number[];
  tpotMs: number[];
  itlMs: number[];
  itlPerTokenMs: number[];
  tokensPerChunk: number[];
  /** Reasoning streams only: TTFO, and the reasoning and answer token counts. */
  ttfoMs: number[];
  reasoningTokens: number[];
  contentTokens: number[];
  /** How many of those counts came from the server's reasoning_tokens. */
  reasoningFromServer: number;
}

/** Pools per-request latencies over ok, measured requests (failed requests have no valid latency). */
export function poolLatencies(records: readonly RequestRecord[]): PooledLatencies {
  const pooled: PooledLatencies = {
    ttftMs: [],
    e2eMs: [],
    tpotMs: [],
    itlMs: [],
    itlPerTokenMs: [],
    tokensPerChunk: [],
    ttfoMs: [],
    reasoningTokens: [],
    contentTokens: [],
    reasoningFromServer: 0,
  };
  for (const record of records) {
    if (!record.ok || !isMeasured(record)) continue;
    const m = requestMetrics(record);
    if (m.ttftMs !== null) pooled.ttftMs.push(m.ttftMs);
    if (m.e2eMs !== null) pooled.e2eMs.push(m.e2eMs);
    if (m.tpotMs !== null) pooled.tpotMs.push(m.tpotMs);
    // push(...spread) would overflow the stack for very long streams.
    for (const v of m.itlMs) pooled.itlMs.push(v);
    for (const v of m.itlPerTokenMs) pooled.itlPerTokenMs.push(v);
    for (const v of m.tokensPerChunk) pooled.tokensPerChunk.push(v);
    if (m.ttfoMs !== null) pooled.ttfoMs.push(m.ttfoMs);
    if (record.nReasoning !== undefined && outputCounted(record)) {
      pooled.reasoningTokens.push(record.nReasoning);
      pooled.contentTokens.push(record.nContent ?? record.nOut - record.nReasoning);
      if (record.nReasoningSource === 'server') pooled.reasoningFromServer++;
    }
  }
  return pooled;
}
