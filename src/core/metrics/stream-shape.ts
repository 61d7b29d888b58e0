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
}

/** Reads and span of one request's token-bearing chunks (chunks are in arrival order). */
export function streamArrival(record: RequestRecord): StreamArrival {
  const chunks = record.chunks;
  let reads = 0;
  let largestRead = 0;
  let run = 0;
  for (let i = 0; i < chunks.length; i++) {
    const t = chunks[i]![0];
    if (i === 0 || t !== chunks[i - 1]![0]) {
      reads++;
      run = 0;
    }
    run++;
    largestRead = Math.max(largestRead, run);
  }
  const spanMs = chunks.length > 0 ? chunks[chunks.length - 1]![0] - chunks[0]![0] : 0;
  return { chunks: chunks.length, reads, largestRead, spanMs };
}

/** Why a request counts as one burst rather than a stream (null: it streamed). */
export type BurstReason = 'one-read' | 'most-in-one-read';

/**
 * Why one request's tokens count as a burst, judged by how they arrived (network reads), never by time: not by the
 * chunk span's share of E2E (under queueing E2E is mostly wait, and a fast server streams its whole output in a sliver
 * of it), nor by pace against the level's output rate (a server whose prefill or queue dominates decodes in bursts far
 * faster than its average, exactly like a proxy replaying a buffer; only the reads tell them apart):
 * - 'one-read': several chunks, all in one network read (a buffering proxy, or a server that writes the response once);
 * - 'most-in-one-read': one read carried more than half of 3 or more chunks (a proxy flushing its buffer at the end
 *   after passing the first token). A client that merely lags merges a few chunks into a read; a diffusion model
 *   sends one chunk per block, each in its own read, so both pass.
 */
export function burstReason(record: RequestRecord): BurstReason | null {
  const a = streamArrival(record);
  if (a.chunks <= 1) return null;
  if (a.reads === 1) return 'one-read';
  if (a.chunks >= 3 && a.largestRead * 2 > a.chunks) return 'most-in-one-read';
  return null;
}

/** How a request's tokens arrived: over time, all in one chunk, or in one burst (see burstReason). */
export function streamingShape(record: RequestRecord): 'streamed' | 'single-chunk' | 'buffered' {
  if (record.chunks.length <= 1) return 'single-chunk';
  return burstReason(record) === null ? 'streamed' : 'buffered';
}
