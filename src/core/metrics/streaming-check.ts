import type { RequestRecord } from '../../shared/request-record.js';
import { hostBusy, hostPressureText } from '../telemetry/host-pressure.js';
import type { CheckFact, CheckStatus, HostPressure } from '../../shared/run-record.js';
import { judged, type Judged } from '../checks/verdict.js';
import { percentile } from './percentiles.js';
import { isMeasured } from './request-metrics.js';
import {
  CHUNKY_MIN_HOLD_MS,
  CLUMP_CHUNKS_PER_FLUSH,
  MAX_STREAM_TOKENS_PER_S,
  clientDecodeMs,
  isBuffered,
  streamTiming,
} from './stream-timing.js';
import type { StreamShape, StreamTiming } from './stream-timing.js';

/** The engine's own mean decode time per request over the level (first to last token), where it reports one. */
export interface ServerDecodeFigure {
  meanMs: number;
  /** Requests it averages. */
  requests: number;
  /** Where it came from, for the prose (e.g. 'vllm:request_decode_time_seconds'). */
  source: string;
}

/** What the streaming check reads besides the records. */
export interface StreamingInput {
  /** The client's event-loop lag, p99 (ms); null when not measured. */
  loopLagP99Ms: number | null;
  /** Loop lag the client check lets pass (ms): a burst held no longer may be the client's own doing. */
  loopLagLimitMs: number;
  /** The engine's per-level decode figure (vLLM's histogram), when scraped. */
  serverDecode?: ServerDecodeFigure | null;
  /** The host's CPU pressure over the level (null: not readable): a stall while it was busy is the host's. */
  host?: HostPressure | null;
}

/** A gap 20x the median chunk gap and over 250 ms is a stall, not decoding (a batched prefill stays under it). */
const STALL_FACTOR = 20;
const STALL_MIN_MS = 250;

/**
 * A client decode span under this share of the server's own decode time, short of it by more than
 * SERVER_DECODE_SLACK_MS and the client's lag, was buffered: tokens cannot arrive faster than the server made them.
 */
const SERVER_DECODE_SHARE = 0.5;
/**
 * Share of a level's requests past which a held minority warns: one stalled moment of this client (or of a server
 * sharing its machine) can merge a short request whole, a proxy holds every one.
 */
const PARTLY_BUFFERED_SHARE = 0.1;

/** The server's own scheduling jitter between making a token and writing it (ms; its HTTP thread on a busy host). */
const SERVER_DECODE_SLACK_MS = 10;

function median(values: readonly number[]): number {
  return values.length === 0
    ? 0
    : percentile(
        [...values].sort((a, b) => a - b),
        50,
      );
}

/** A verdict whose sentence src/core/checks/streaming-prose.ts makes from its code and facts. */
function streamingResult(status: CheckStatus, code: string, facts: Record<string, CheckFact>): Judged {
  return judged('streaming', status, code, facts);
}

/** Requests with a mid-stream pause far longer than the typical chunk gap (diffusion blocks are regular, so pass). */
function stalledRequests(records: readonly RequestRecord[]): {
  count: number;
  maxGapMs: number;
  medianGapMs: number;
} {
  const gapsOf = (r: RequestRecord): number[] => r.chunks.slice(1).map((c, i) => c[0] - r.chunks[i]![0]);
  // Gaps between distinct network reads: chunks merged into one read (gap 0) say nothing of the decode pace.
  const all = records.flatMap(gapsOf).filter((g) => g > 0);
  if (all.length === 0) return { count: 0, maxGapMs: 0, medianGapMs: 0 };
  const medianGapMs = median(all);
  const limit = Math.max(STALL_MIN_MS, STALL_FACTOR * medianGapMs);
  let count = 0;
  let maxGapMs = 0;
  for (const r of records) {
    const worst = Math.max(0, ...gapsOf(r));
    if (worst > limit) {
      count++;
      maxGapMs = Math.max(maxGapMs, worst);
    }
  }
  return { count, maxGapMs, medianGapMs };
}

/** What the server's own decode times say against the client's spans. */
interface ServerEvidence {
  /** Requests (or the level) whose decode the server timed. */
  timed: number;
  /** Of them, those whose client span was far shorter: proof of buffering. */
  short: number;
  clientMs: number;
  serverMs: number;
  source: string;
}

/** The client span is far shorter than the server's decode time (see SERVER_DECODE_SHARE). */
function spanTooShort(clientMs: number, serverMs: number, lagMs: number): boolean {
  return clientMs < SERVER_DECODE_SHARE * serverMs && serverMs - clientMs > Math.max(SERVER_DECODE_SLACK_MS, lagMs);
}

/** The request's E2E on the client (ms); the server's decode happened within it. */
const e2eMs = (r: RequestRecord): number => (r.endMs ?? r.sendMs) - r.sendMs;

/**
 * Per request where the server times each one (llama.cpp's timings.predicted_ms), else the engine's level mean. A
 * decode time longer than the request lasted on the client (plus the slack) is impossible and proves nothing: such
 * requests, or such a level figure, are left out.
 */
function serverEvidence(multi: readonly RequestRecord[], input: StreamingInput): ServerEvidence | null {
  const lag = input.loopLagP99Ms ?? 0;
  const timed = multi.filter(
    (r) =>
      r.serverDecodeMs !== undefined &&
      clientDecodeMs(r) !== null &&
      r.serverDecodeMs <= e2eMs(r) + SERVER_DECODE_SLACK_MS,
  );
  if (timed.length > 0) {
    const short = timed.filter((r) => spanTooShort(clientDecodeMs(r)!, r.serverDecodeMs!, lag));
    const pick = short.length * 2 > timed.length ? short : timed;
    return {
      timed: timed.length,
      short: short.length,
      clientMs: median(pick.map((r) => clientDecodeMs(r)!)),
      serverMs: median(pick.map((r) => r.serverDecodeMs!)),
      source: 'timings.predicted_ms',
    };
  }
  const level = input.serverDecode;
  const spans = multi.map(clientDecodeMs).filter((x): x is number => x !== null);
  if (!level || level.requests === 0 || spans.length === 0) return null;
  const clientMs = spans.reduce((a, b) => a + b, 0) / spans.length;
  const meanE2eMs = multi.reduce((a, r) => a + e2eMs(r), 0) / multi.length;
  if (level.meanMs > meanE2eMs + SERVER_DECODE_SLACK_MS) return null;
  const short = spanTooShort(clientMs, level.meanMs, lag) ? spans.length : 0;
  return { timed: spans.length, short, clientMs, serverMs: level.meanMs, source: level.source };
}

function serverFacts(e: ServerEvidence | null): Record<string, CheckFact> {
  if (!e) return {};
  return {
    serverTimedRequests: e.timed,
    serverDecodeShortRequests: e.short,
    clientDecodeMs: e.clientMs,
    serverDecodeMs: e.serverMs,
    serverDecodeSource: e.source,
  };
}

const rate = (tokens: number, ms: number): number => (ms > 0 ? (tokens * 1000) / ms : Infinity);

/** A rate as a fact: null for an infinite one (every token at one instant). */
const finite = (x: number): number | null => (Number.isFinite(x) ? x : null);

/** The facts of a level whose requests mostly arrived buffered, by its commonest shape. */
function heldFacts(shape: StreamShape, of: StreamTiming[]): Record<string, CheckFact> {
  const facts: Record<string, CheckFact> = {
    shapeRequests: of.length,
    heldTokensMedian: median(of.map((t) => t.heldTokens)),
    heldShareMedian: median(of.map((t) => t.heldTokens / t.restTokens)),
    maxStreamTokPerS: MAX_STREAM_TOKENS_PER_S,
  };
  if (shape === 'buffered-whole') {
    const spanMs = median(of.map((t) => t.burstSpanMs));
    const tokPerS = median(of.map((t) => rate(t.heldTokens, t.burstSpanMs)));
    return { ...facts, burstSpanMsMedian: spanMs, burstTokPerSMedian: finite(tokPerS) };
  }
  facts.holdMsMedian = median(of.map((t) => t.holdMs));
  if (shape === 'buffered-after-first') return facts;
  return { ...facts, burstsMedian: median(of.map((t) => t.bursts)), chunkyMinHoldMs: CHUNKY_MIN_HOLD_MS };
}

/** The commonest buffered shape (ties: whole, then after-first, then chunky). */
function commonestBuffered(timings: readonly StreamTiming[]): StreamShape {
  const order: StreamShape[] = ['buffered-whole', 'buffered-after-first', 'chunky'];
  const count = (s: StreamShape): number => timings.filter((t) => t.shape === s).length;
  return order.reduce((best, s) => (count(s) > count(best) ? s : best), order[0]!);
}

/** Pass, stall, clumps: a level whose requests streamed (the held ones are counted in `base`). */
function streamedVerdict(
  multi: RequestRecord[],
  timings: StreamTiming[],
  input: StreamingInput,
  base: Record<string, CheckFact>,
): Judged {
  const perFlush = median(timings.map((t) => t.chunks / Math.max(1, t.flushes)));
  const spanMs = median(timings.map((t) => t.spanMs));
  const tokPerS = median(timings.map((t) => rate(t.restTokens, t.spanMs)));
  const facts = {
    ...base,
    streamedRequests: multi.length,
    chunksPerArrivalMedian: perFlush,
    spanMsMedian: spanMs,
    restTokPerSMedian: finite(tokPerS),
  };
  if (perFlush >= CLUMP_CHUNKS_PER_FLUSH) return streamingResult('warn', 'clumped', facts);
  const stalls = stalledRequests(multi);
  if (stalls.count > 0) {
    const busy = hostBusy(input.host);
    return streamingResult('warn', 'stalled', {
      ...facts,
      stalledRequests: stalls.count,
      maxGapMs: stalls.maxGapMs,
      medianGapMs: stalls.medianGapMs,
      hostBusy: busy,
      loopLagLimitMs: input.loopLagLimitMs,
      ...(busy === true ? { hostPressure: hostPressureText(input.host) } : {}),
    });
  }
  return streamingResult('pass', 'streamed', facts);
}

/** What every verdict of one level shares: its requests' shapes, the client's lag, the server's evidence. */
interface LevelShapes {
  multi: RequestRecord[];
  timings: StreamTiming[];
  single: number;
  buffered: number;
  server: ServerEvidence | null;
  proven: boolean;
  base: Record<string, CheckFact>;
}

/** The level's requests judged one by one, with the facts every verdict carries. */
function levelShapes(multi: RequestRecord[], input: StreamingInput): LevelShapes {
  const clientHoldMs = Math.max(input.loopLagLimitMs, input.loopLagP99Ms ?? 0);
  const timings = multi.map((r) => streamTiming(r, { clientHoldMs }));
  const count = (s: StreamShape): number => timings.filter((t) => t.shape === s).length;
  const single = count('single-chunk');
  const server = serverEvidence(multi, input);
  const base: Record<string, CheckFact> = {
    requests: multi.length,
    bufferedWholeRequests: count('buffered-whole'),
    bufferedAfterFirstRequests: count('buffered-after-first'),
    chunkyRequests: count('chunky'),
    singleChunkRequests: single,
    chunksMedian: median(multi.map((r) => r.chunks.length)),
    clientLoopLagP99Ms: input.loopLagP99Ms,
    ...serverFacts(server),
  };
  return {
    multi,
    timings,
    single,
    buffered: timings.filter((t) => isBuffered(t.shape)).length,
    server,
    proven: server !== null && server.short * 2 > server.timed,
    base,
  };
}

/** Most requests held (or in one chunk beside held ones): a failure, or on a lagging client a warning. */
function bufferedVerdict(level: LevelShapes, input: StreamingInput): Judged {
  const { timings, base } = level;
  const shape = commonestBuffered(timings);
  const facts = {
    ...base,
    ...heldFacts(
      shape,
      timings.filter((t) => t.shape === shape),
    ),
  };
  const lag = input.loopLagP99Ms;
  if (shape === 'buffered-whole' && lag !== null && lag > input.loopLagLimitMs && !level.proven)
    return streamingResult('warn', 'client-lag', facts);
  return streamingResult('fail', shape, facts);
}

/**
 * streaming: tokens arrived over time, judged by time, never by how many reads or frames carried them (a buffer
 * released in one write still reaches the client frame by frame). Per request (streamTiming): tokens that came
 * faster than any decoder makes them were held; most of a request's output held with its first token is
 * 'buffered-whole', after its first token in one burst 'buffered-after-first', in several long-held bursts 'chunky'.
 * The level fails when most multi-token requests were held (or came in one chunk while others were held), and when
 * the server's own decode time (llama.cpp's timings, vLLM's decode histogram) is far longer than the span the tokens
 * reached the client over. A burst no longer than the client's own loop lag could be the client's: bursts are only
 * counted when held longer, and a level of whole responses on a client past its lag limit only warns, unless the
 * server's timing proves the buffering. Single chunks alone only warn; stalls (a pause, then tokens at the normal
 * pace) warn.
 */
export function judgeStreaming(records: readonly RequestRecord[], input: StreamingInput): Judged {
  const multi = records.filter((r) => isMeasured(r) && r.ok && r.nOut > 1);
  if (multi.length === 0)
    return streamingResult('warn', 'no-requests', { requests: 0, clientLoopLagP99Ms: input.loopLagP99Ms });
  const level = levelShapes(multi, input);
  const { timings, single, buffered, base } = level;
  if (buffered > 0 && (buffered + single) * 2 > multi.length) return bufferedVerdict(level, input);
  if (level.proven) return streamingResult('fail', 'server-decode-mismatch', base);
  const streamed = timings.filter((t) => t.shape === 'streamed');
  if (buffered === 0 && single > 0) return streamingResult('warn', 'single-chunk', base);
  if (buffered > PARTLY_BUFFERED_SHARE * multi.length) {
    const shape = commonestBuffered(timings);
    return streamingResult('warn', 'partly-buffered', {
      ...base,
      ...heldFacts(
        shape,
        timings.filter((t) => t.shape === shape),
      ),
      heldShape: shape,
      streamedRequests: streamed.length,
    });
  }
  const streamedRecords = multi.filter((_, i) => timings[i]!.shape === 'streamed');
  return streamedVerdict(streamedRecords, streamed, input, base);
}
