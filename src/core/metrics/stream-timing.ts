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

/**
 * One arrival: a run of chunks whose tokens after its first came sooner, all told, than a decoder at
 * MAX_STREAM_TOKENS_PER_S makes them. Judged over the run, not gap by gap: a released buffer's frames are handed over
 * microseconds apart, but one of them may lag a little (the first frame's parse, a collection) without the run being
 * any slower than a burst.
 */
interface Flush {
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

/**
 * A request's token-bearing chunks grouped into arrivals (see Flush), in order. With C the tokens up to chunk i,
 * "slack" D_i = t_i - C_i / MAX_STREAM_TOKENS_PER_S grows while tokens come at a decoder's pace and falls during a
 * burst; the run from chunk a reaches the last chunk b whose slack is below a's (tokens a+1..b came too fast, all
 * told), found by binary search on the suffix minima of D.
 */
function flushesOf(record: RequestRecord): Flush[] {
  const chunks = record.chunks;
  const n = chunks.length;
  const slack = new Float64Array(n);
  let tokens = 0;
  for (let i = 0; i < n; i++) {
    tokens += chunks[i]![1];
    slack[i] = chunks[i]![0] - (tokens * 1000) / MAX_STREAM_TOKENS_PER_S;
  }
  // Suffix minima are non-decreasing: the last b with sufMin[b] < slack[a] is the run's end.
  const sufMin = new Float64Array(n);
  for (let i = n - 1; i >= 0; i--) sufMin[i] = i === n - 1 ? slack[i]! : Math.min(slack[i]!, sufMin[i + 1]!);
  const flushes: Flush[] = [];
  let a = 0;
  while (a < n) {
    let lo = a;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (sufMin[mid]! < slack[a]!) lo = mid;
      else hi = mid - 1;
    }
    const b = lo;
    let coalescedTokens = 0;
    for (let i = a + 1; i <= b; i++) coalescedTokens += chunks[i]![1];
    const prev = flushes[flushes.length - 1];
    flushes.push({
      first: a,
      chunks: b - a + 1,
      leadTokens: chunks[a]![1],
      coalescedTokens,
      startMs: chunks[a]![0],
      endMs: chunks[b]![0],
      pauseMs: chunks[a]![0] - (prev ? prev.endMs : record.sendMs),
    });
    a = b + 1;
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
