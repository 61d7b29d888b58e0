import type { RequestRecord } from '../../shared/request-record.js';
import type { CheckFact } from '../../shared/run-record.js';
import { isMeasured, outputCounted } from './request-metrics.js';
import { MAX_STREAM_TOKENS_PER_S } from './stream-timing.js';

/**
 * Share of a level's chunk gaps from which its ITL is dominated by events that arrived together: the median gap
 * is then one of them, the client's parse time between two events of one network read, not a decode step.
 */
export const COALESCED_ITL_SHARE = 0.5;

/** The server's decode time may exceed the client's E2E by its own scheduling jitter at most (ms). */
const SERVER_SLACK_MS = 10;

/**
 * A gap shorter than its chunk's tokens take at MAX_STREAM_TOKENS_PER_S came with no decode time of its own: the
 * event was read with the one before it (several SSE events in one read, a stream the client read late).
 */
export function isCoalescedGap(gapMs: number, tokens: number): boolean {
  return gapMs * MAX_STREAM_TOKENS_PER_S < Math.max(1, tokens) * 1000;
}

/**
 * The server's own time per output token after the first, where it times each request (llama.cpp: timings.predicted_ms
 * over predicted_n - 1, which runs from the first sampled token to the last); null without it, or when the figure is
 * impossible (longer than the request lasted on the client).
 */
export function serverItlMs(record: RequestRecord): number | null {
  const decode = record.serverDecodeMs;
  if (decode === undefined || !outputCounted(record) || record.nOut < 2 || record.endMs === null) return null;
  if (decode < 0 || decode > record.endMs - record.sendMs + SERVER_SLACK_MS) return null;
  return decode / (record.nOut - 1);
}

/** How a level's chunk gaps arrived, and the server's own time per token where it gives one. */
export interface CoalescedItl {
  gaps: number;
  /** Gaps between events that arrived together (isCoalescedGap). */
  coalesced: number;
  /** coalesced / gaps; null without gaps. */
  share: number | null;
  /** serverItlMs of each ok request that has it. */
  serverItlMs: number[];
}

/** The coalesced share of the ok measured requests' chunk gaps, and their server time per token. */
export function coalescedItl(records: readonly RequestRecord[]): CoalescedItl {
  let gaps = 0;
  let coalesced = 0;
  const server: number[] = [];
  for (const r of records) {
    if (!r.ok || !isMeasured(r)) continue;
    for (let i = 1; i < r.chunks.length; i++) {
      gaps++;
      if (isCoalescedGap(r.chunks[i]![0] - r.chunks[i - 1]![0], r.chunks[i]![1])) coalesced++;
    }
    const s = serverItlMs(r);
    if (s !== null) server.push(s);
  }
  return { gaps, coalesced, share: gaps > 0 ? coalesced / gaps : null, serverItlMs: server };
}

/** What ITL being dominated by events read together rests on (the streaming check words it: streaming-prose.ts). */
export interface CoalescedItlFinding {
  facts: Record<string, CheckFact>;
}

/**
 * Null unless most chunk gaps came with no decode time (COALESCED_ITL_SHARE): then the ITL percentiles are the
 * client's reads, and the time per token is the server's own (`serverP50Ms`) or, without it, TPOT (`tpotP50Ms`).
 */
export function coalescedItlFinding(
  c: CoalescedItl,
  itlP50Ms: number | null,
  serverP50Ms: number | null,
  tpotP50Ms: number | null,
): CoalescedItlFinding | null {
  if (c.share === null || c.share <= COALESCED_ITL_SHARE) return null;
  const facts: Record<string, CheckFact> = {
    itlGaps: c.gaps,
    coalescedGaps: c.coalesced,
    coalescedShare: c.share,
    itlP50Ms,
    serverItlP50Ms: serverP50Ms,
    tpotP50Ms,
  };
  return { facts };
}
