import type { RequestRecord } from '../../shared/request-record.js';

/**
 * The most tokens per second any decoder delivers to one stream, with room to spare. The fastest per-user rates
 * published: a model hard-wired in silicon (Taalas HC1, Llama 3.1 8B) about 17,000 tok/s, bursts to 20,000; wafer-scale
 * and LPU services with speculative decoding (Cerebras, Groq, SambaNova) 1,000–3,000; block-diffusion models (Mercury,
 * Gemini Diffusion, Seed Diffusion) up to about 2,200; vLLM, SGLang and llama.cpp on one GPU a few hundred (a server's
 * HTTP layer alone spends tens of microseconds per event). 50,000 is 2.5x the fastest of them. A buffer released
 * event by event reads far faster: 64 chunk frames of one write arrive within about 0.04 ms, over a million tok/s.
 * A chunk carrying k tokens (a diffusion block, accepted draft tokens, a server's own merge) is allowed k tokens' time.
 */
export const MAX_STREAM_TOKENS_PER_S = 50_000;

/**
 * The shortest hold that makes a stream chunky: longer than TCP's delayed ACK (40 ms on Linux) that Nagle's algorithm
 * may wait on, and than any engine's decode step; a proxy that flushes every few hundred milliseconds is well past it.
 */
export const CHUNKY_MIN_HOLD_MS = 100;

/** Median chunks per arrival from which a stream that passed counts as clumped (a client merely behind merges 1–2). */
export const CLUMP_CHUNKS_PER_FLUSH = 4;

/** One arrival: a chunk and those that came after it sooner than any decoder makes their tokens. */
export interface Flush {
  /** Index of its first chunk in the record. */
  first: number;
  chunks: number;
  /** Tokens of its first chunk. */
  leadTokens: number;
  /** Tokens of its later chunks: they came with no decode time of their own. */
  coalescedTokens: number;
  /** Arrival of its first and last chunk (ms). */
  startMs: number;
  endMs: number;
  /** From the previous flush's last chunk to this one's first (from the send for the first flush). */
  pauseMs: number;
}

/** Whether chunk i came sooner after chunk i-1 than a decoder at MAX_STREAM_TOKENS_PER_S makes its tokens. */
function tooSoon(chunks: ReadonlyArray<readonly [number, number]>, i: number): boolean {
  const [t, tokens] = chunks[i]!;
  return t - chunks[i - 1]![0] < (Math.max(1, tokens) * 1000) / MAX_STREAM_TOKENS_PER_S;
}

/** A request's token-bearing chunks grouped into arrivals (see Flush), in order. */
export function flushesOf(record: RequestRecord): Flush[] {
  const chunks = record.chunks;
  const flushes: Flush[] = [];
  for (let i = 0; i < chunks.length; i++) {
    const [t, tokens] = chunks[i]!;
    const last = flushes[flushes.length - 1];
    if (last && tooSoon(chunks, i)) {
      last.chunks++;
      last.coalescedTokens += tokens;
      last.endMs = t;
      continue;
    }
    const pauseMs = t - (last ? last.endMs : record.sendMs);
    flushes.push({ first: i, chunks: 1, leadTokens: tokens, coalescedTokens: 0, startMs: t, endMs: t, pauseMs });
  }
  return flushes;
}

/**
 * How a request's tokens arrived, judged by time:
 * - 'single-chunk': all in one chunk (a diffusion block covering the output, or a server that does not stream);
 * - 'buffered-whole': most tokens after the first came together with it, faster than any decoder: TTFT is E2E;
 * - 'buffered-after-first': the first token alone, then most of the rest in one burst held longer than the client can;
 * - 'chunky': most of the output in bursts, each held longer than CHUNKY_MIN_HOLD_MS and than the client can;
 * - 'streamed': otherwise.
 */
export type StreamShape = 'single-chunk' | 'buffered-whole' | 'buffered-after-first' | 'chunky' | 'streamed';

/** What the time-based judgement of one request found. */
export interface StreamTiming {
  shape: StreamShape;
  chunks: number;
  /** Tokens after the first chunk. */
  restTokens: number;
  /** First to last token-bearing chunk (ms). */
  spanMs: number;
  flushes: number;
  /** Tokens that came in bursts: the first arrival's coalesced tokens, and those of the bursts held too long. */
  heldTokens: number;
  /** Bursts held too long (the first arrival counts when it carried most of the output). */
  bursts: number;
  /** Longest hold among those bursts, beyond the stream's own time per token (ms); 0 for 'buffered-whole'. */
  holdMs: number;
  /** Arrival span of the first arrival's coalesced tokens (ms), for 'buffered-whole'. */
  burstSpanMs: number;
}

/** Longest hold (ms) this client could have caused itself; bursts held longer were held elsewhere. */
export interface HoldLimits {
  clientHoldMs: number;
}

/**
 * The time-based judgement of one request (see StreamShape). A burst's hold is its pause less the stream's own mean
 * time per token: a client whose loop was late by L ms reads the tokens of those L ms at once after a pause of about
 * L plus one token time, so it is never called held while L stays within limits.clientHoldMs; a proxy that held the
 * tokens for T ms shows a hold of about T.
 */
export function streamTiming(record: RequestRecord, limits: HoldLimits): StreamTiming {
  const chunks = record.chunks;
  const flushes = flushesOf(record);
  const tokens = chunks.reduce((a, c) => a + c[1], 0);
  const restTokens = chunks.length > 0 ? tokens - chunks[0]![1] : 0;
  const spanMs = chunks.length > 1 ? chunks[chunks.length - 1]![0] - chunks[0]![0] : 0;
  const base = { chunks: chunks.length, restTokens, spanMs, flushes: flushes.length };
  const none = { heldTokens: 0, bursts: 0, holdMs: 0, burstSpanMs: 0 };
  if (chunks.length <= 1 || restTokens <= 0) return { shape: 'single-chunk', ...base, ...none };
  const head = flushes[0]!;
  if (head.coalescedTokens * 2 > restTokens) {
    const burstSpanMs = head.endMs - head.startMs;
    return { shape: 'buffered-whole', ...base, heldTokens: head.coalescedTokens, bursts: 1, holdMs: 0, burstSpanMs };
  }
  const tokenMs = spanMs / restTokens;
  const held = (f: Flush, limitMs: number): boolean => f.coalescedTokens > 0 && f.pauseMs - tokenMs > limitMs;
  const later = flushes.slice(1);
  const tail = later.find((f) => f.coalescedTokens * 2 > restTokens && held(f, limits.clientHoldMs));
  if (tail) {
    const holdMs = tail.pauseMs - tokenMs;
    const heldTokens = tail.coalescedTokens + tail.leadTokens;
    return { shape: 'buffered-after-first', ...base, heldTokens, bursts: 1, holdMs, burstSpanMs: 0 };
  }
  const chunkyLimit = Math.max(CHUNKY_MIN_HOLD_MS, limits.clientHoldMs);
  const bursts = later.filter((f) => held(f, chunkyLimit));
  const heldTokens = head.coalescedTokens + bursts.reduce((a, f) => a + f.coalescedTokens + f.leadTokens, 0);
  if (bursts.length > 0 && heldTokens * 2 > restTokens) {
    const holdMs = bursts.reduce((a, f) => Math.max(a, f.pauseMs - tokenMs), 0);
    const count = bursts.length + (head.coalescedTokens > 0 ? 1 : 0);
    return { shape: 'chunky', ...base, heldTokens, bursts: count, holdMs, burstSpanMs: 0 };
  }
  return { shape: 'streamed', ...base, ...none };
}

/** The shapes that mean the stream was held somewhere (a proxy, or a server writing it at once). */
export function isBuffered(shape: StreamShape): boolean {
  return shape === 'buffered-whole' || shape === 'buffered-after-first' || shape === 'chunky';
}

/** The client's decode span: first token to the last token-bearing chunk (ms); null without tokens. */
export function clientDecodeMs(record: RequestRecord): number | null {
  if (record.firstTokenMs === null || record.chunks.length === 0) return null;
  return record.chunks[record.chunks.length - 1]![0] - record.firstTokenMs;
}
