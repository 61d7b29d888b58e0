import type { RequestRecord } from '../../../src/shared/request-record.js';
import { makeRecord } from './make-record.js';

/** A closed-loop level against a server with a fixed number of slots, as the client would record it. */
export interface QueuedLevelShape {
  /** Closed-loop concurrency (clients). */
  clients: number;
  /** Requests the server decodes at once; the rest wait in its queue. */
  slots: number;
  requests: number;
  /** Output tokens per request. */
  tokens: number;
  /** Tokens per chunk (a diffusion model sends whole blocks). */
  tokensPerChunk?: number;
  /** Server time from taking a request to its first chunk. */
  prefillMs: number;
  /** Server time between chunks of one request. */
  chunkGapMs: number;
  /** Every n-th chunk reaches the client in the same network read as the one before (0: never). */
  mergeEvery?: number;
  /** How the client receives each request's chunks (default: as the server sends them). */
  deliver?: (times: number[]) => number[];
}

/**
 * Records of a queued server: requests wait for a slot, then stream their chunks. Deterministic (no clock), so the
 * verdict on it is the same on any machine.
 */
export function queuedLevel(shape: QueuedLevelShape): RequestRecord[] {
  const perChunk = shape.tokensPerChunk ?? 1;
  const chunkCount = Math.ceil(shape.tokens / perChunk);
  const slotFree = Array.from({ length: shape.slots }, () => 0);
  // Pending sends in time order: every client sends at 0, then again when its request ends.
  const pending: number[] = Array.from({ length: Math.min(shape.clients, shape.requests) }, () => 0);
  const records: RequestRecord[] = [];
  let sent = pending.length;
  while (pending.length > 0) {
    const sendMs = pending.shift()!;
    let slot = 0;
    for (let s = 1; s < slotFree.length; s++) if (slotFree[s]! < slotFree[slot]!) slot = s;
    const start = Math.max(sendMs, slotFree[slot]!);
    const serverTimes = Array.from({ length: chunkCount }, (_, i) => start + shape.prefillMs + i * shape.chunkGapMs);
    // A merged chunk arrives in the same read as the chunk before it.
    let times = serverTimes.slice();
    for (let i = 1; i < times.length; i++) if (shape.mergeEvery && i % shape.mergeEvery === 0) times[i] = times[i - 1]!;
    if (shape.deliver) times = shape.deliver(times);
    const endMs = times[times.length - 1]! + 0.05;
    slotFree[slot] = serverTimes[serverTimes.length - 1]!;
    const chunks: Array<[number, number]> = times.map((t, i) => [
      t,
      i === chunkCount - 1 ? shape.tokens - perChunk * (chunkCount - 1) : perChunk,
    ]);
    records.push(
      makeRecord({
        id: records.length,
        requestTag: `q-${records.length}`,
        sendMs,
        firstTokenMs: times[0]!,
        endMs,
        chunks,
        nOut: shape.tokens,
        expectedOut: shape.tokens,
        clientChunkCount: chunkCount,
      }),
    );
    if (sent < shape.requests) {
      sent++;
      const at = pending.findIndex((t) => t > endMs);
      pending.splice(at < 0 ? pending.length : at, 0, endMs);
    }
  }
  return records;
}

/** A buffering proxy: the whole response reaches the client in one read after the last chunk. */
export const oneReadAtEnd = (times: number[]): number[] => times.map(() => times[times.length - 1]! + 1);

/** A proxy that flushes its first buffer early, then the rest in one read at the end. */
export const firstThenRest = (times: number[]): number[] =>
  times.map((t, i) => (i === 0 ? t : times[times.length - 1]! + 1));

/**
 * A buffer released at the end in one write, its frames handed to the client one by one 0.6 µs apart (as the HTTP
 * client stamps each chunk frame of one read): every chunk its own timestamp, all within a fraction of a millisecond.
 */
export const replayAtEnd = (times: number[]): number[] =>
  times.map((_, i) => times[times.length - 1]! + 1 + i * 0.0006);

/** A proxy that flushes what it holds every `everyMs` (from the first chunk), frame by frame as replayAtEnd. */
export const flushEvery =
  (everyMs: number) =>
  (times: number[]): number[] => {
    const start = times[0]!;
    const end = times[times.length - 1]! + 1;
    let tick = -1;
    let inTick = 0;
    return times.map((t) => {
      const at = Math.min(end, start + Math.ceil((t - start + 1e-9) / everyMs) * everyMs);
      inTick = at === tick ? inTick + 1 : 0;
      tick = at;
      return at + inTick * 0.0006;
    });
  };
