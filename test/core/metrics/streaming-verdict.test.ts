import { describe, expect, it } from 'vitest';
import { streamingCheck } from '../../../src/core/checks/streaming.js';
import { MAX_STREAM_TOKENS_PER_S, streamTiming } from '../../../src/core/metrics/stream-timing.js';
import { requestMetrics } from '../../../src/core/metrics/request-metrics.js';
import type { RequestRecord } from '../../../src/shared/request-record.js';
import { firstThenRest, flushEvery, oneReadAtEnd, queuedLevel, replayAtEnd } from './queued-level.js';

// A fast server with 4 slots behind a deep queue: 300 ms prefill, then 128 tokens every 0.3 ms, one write each;
// every 8th token shares a network read with the one before (the client read two writes at once).
// The old rule: a chunk span under this share of E2E, after a TTFT over half of it, was called buffered.
const OLD_SPAN_SHARE = 0.05;

const fastQueued = { slots: 4, requests: 320, tokens: 128, prefillMs: 300, chunkGapMs: 0.3, mergeEvery: 8 };
/** The client limits' loop lag (CLIENT_LIMITS.loopLagWarnMs): a burst held no longer may be the client's. */
const hold = { clientHoldMs: 20 };

/** The records with a server that times itself (llama.cpp's timings.predicted_ms). */
const withServerDecode = (records: RequestRecord[], decodeMs: number): RequestRecord[] =>
  records.map((r) => ({ ...r, serverPromptMs: 1, serverDecodeMs: decodeMs }));

describe('streaming verdict under queueing', () => {
  it('queued fast server at c=64: passes, though its chunk span is a tiny share of E2E', () => {
    const records = queuedLevel({ ...fastQueued, clients: 64 });
    // The shape that fooled the old rule (chunk span under 5 % of E2E after a TTFT over half of it) in most requests.
    const spanRuleBuffered = records.filter((r) => {
      const m = requestMetrics(r);
      return (r.chunks.at(-1)![0] - r.chunks[0]![0]) / m.e2eMs! < OLD_SPAN_SHARE && m.ttftMs! / m.e2eMs! > 0.5;
    });
    expect(spanRuleBuffered.length * 2).toBeGreaterThan(records.length);
    expect(streamTiming(records[0]!, hold).shape).toBe('streamed');
    const c = streamingCheck(records);
    expect(c.status).toBe('pass');
    expect(c.code).toBe('streamed');
    expect(c.facts).toMatchObject({ requests: 320, chunksMedian: 128, bufferedWholeRequests: 0 });
    expect(c.facts!.spanMsMedian).toBeCloseTo(127 * 0.3, 6);
  });

  it('queued server at c=256 (overloaded vLLM, 64 in the batch, merged multi-token chunks): passes', () => {
    const records = queuedLevel({
      clients: 256,
      slots: 64,
      requests: 1024,
      tokens: 256,
      tokensPerChunk: 3,
      prefillMs: 900,
      chunkGapMs: 40,
    });
    expect(streamingCheck(records).code).toBe('streamed');
  });

  it('diffusion model streaming whole blocks behind a queue: passes', () => {
    const records = queuedLevel({ ...fastQueued, clients: 64, tokensPerChunk: 32, chunkGapMs: 20, mergeEvery: 0 });
    expect(streamTiming(records[0]!, hold)).toMatchObject({ shape: 'streamed', chunks: 4, flushes: 4 });
    expect(streamingCheck(records).status).toBe('pass');
  });

  it('diffusion model alone on the server (c=1): passes', () => {
    const records = queuedLevel({
      clients: 1,
      slots: 1,
      requests: 10,
      tokens: 256,
      tokensPerChunk: 32,
      prefillMs: 120,
      chunkGapMs: 60,
    });
    expect(streamingCheck(records).status).toBe('pass');
  });

  it('a decoder as fast as the fastest published (17,000 tok/s, one token per chunk): passes, fast is not buffered', () => {
    const records = queuedLevel({ clients: 1, slots: 1, requests: 8, tokens: 256, prefillMs: 20, chunkGapMs: 1 / 17 });
    expect(streamingCheck(records).code).toBe('streamed');
  });

  it('speculative decoding (1–4 accepted tokens per chunk, 4 ms a step): passes', () => {
    const records = queuedLevel({ clients: 4, slots: 4, requests: 16, tokens: 256, prefillMs: 50, chunkGapMs: 4 });
    for (const r of records) r.chunks = r.chunks.map(([t], i) => [t, 1 + ((i * 7) % 4)]);
    expect(streamingCheck(records).code).toBe('streamed');
  });
});

describe('streaming verdict on buffering proxies', () => {
  it('a proxy holding the whole response, released in one read at the end, c=64: fails as buffered-whole', () => {
    const records = queuedLevel({ ...fastQueued, clients: 64, deliver: oneReadAtEnd });
    expect(streamTiming(records[0]!, hold)).toMatchObject({ shape: 'buffered-whole', heldTokens: 127 });
    const c = streamingCheck(records);
    expect(c.status).toBe('fail');
    expect(c.code).toBe('buffered-whole');
    expect(c.facts).toMatchObject({ requests: 320, bufferedWholeRequests: 320, heldTokensMedian: 127 });
    expect(c.facts!.burstSpanMsMedian).toBe(0);
  });

  it('the same buffer released frame by frame (every chunk its own timestamp, 0.6 µs apart): fails all the same', () => {
    // What a real llama.cpp behind an nginx with proxy_buffering showed: 64 chunk frames "in 64 distinct reads" over
    // 0.04 ms passed the old read-counting rule. Time decides: 127 tokens in 0.08 ms is over a million tok/s.
    const records = queuedLevel({ ...fastQueued, clients: 64, deliver: replayAtEnd });
    const t = streamTiming(records[0]!, hold);
    expect(t.shape).toBe('buffered-whole');
    expect((t.heldTokens * 1000) / t.burstSpanMs).toBeGreaterThan(20 * MAX_STREAM_TOKENS_PER_S);
    const c = streamingCheck(records);
    expect(c.code).toBe('buffered-whole');
    expect(c.facts!.burstTokPerSMedian as number).toBeGreaterThan(1e6);
  });

  it('a released buffer whose second frame lagged 0.03 ms (its parse): still one burst, judged over the run', () => {
    // As recorded behind a hold-all proxy in front of the simulator: 0, +0.029, then 0.001–0.003 ms apart.
    const released = (times: number[]): number[] =>
      times.map((_, i) => times[times.length - 1]! + 1 + (i === 0 ? 0 : 0.029 + (i - 1) * 0.002));
    const records = queuedLevel({ ...fastQueued, clients: 4, requests: 16, deliver: released });
    expect(streamTiming(records[0]!, hold)).toMatchObject({ shape: 'buffered-whole', flushes: 1, heldTokens: 127 });
    expect(streamingCheck(records).code).toBe('buffered-whole');
  });

  it('whole responses while the client itself lagged past its limit: a warning that cannot tell, never a fail', () => {
    const records = queuedLevel({ ...fastQueued, clients: 64, deliver: oneReadAtEnd });
    expect(streamingCheck(records, 5).code).toBe('buffered-whole'); // a healthy client: the time is evidence
    const c = streamingCheck(records, 180);
    expect(c.status).toBe('warn');
    expect(c.code).toBe('client-lag');
    expect(c.facts).toMatchObject({ clientLoopLagP99Ms: 180, bufferedWholeRequests: 320 });
  });

  it('whole responses on a lagging client where the server timed its decode far longer: fails, the server proves it', () => {
    // 127 tokens 2 ms apart: the server decoded for 254 ms, longer than the client's 180 ms lag could hide.
    const queued = queuedLevel({ ...fastQueued, clients: 64, chunkGapMs: 2, deliver: oneReadAtEnd });
    const c = streamingCheck(withServerDecode(queued, 254), 180);
    expect(c.status).toBe('fail');
    expect(c.code).toBe('buffered-whole');
    expect(c.facts).toMatchObject({ serverDecodeMs: 254, clientDecodeMs: 0, serverDecodeShortRequests: 320 });
    // A decode the client's lag could cover proves nothing.
    expect(streamingCheck(withServerDecode(queued, 150), 180).code).toBe('client-lag');
  });

  it('a proxy passing the first token, then the rest in one burst at the end: fails as buffered-after-first', () => {
    const records = queuedLevel({ ...fastQueued, clients: 64, chunkGapMs: 2, deliver: firstThenRest });
    const t = streamTiming(records[0]!, hold);
    expect(t).toMatchObject({ shape: 'buffered-after-first', heldTokens: 127, bursts: 1 });
    expect(t.holdMs).toBeGreaterThan(250);
    const c = streamingCheck(records);
    expect(c.status).toBe('fail');
    expect(c.code).toBe('buffered-after-first');
    expect(c.facts).toMatchObject({ bufferedAfterFirstRequests: 320, heldShareMedian: 1 });
  });

  it('pass-first-then-hold with the burst frame by frame: fails as buffered-after-first', () => {
    const replayRest = (times: number[]): number[] => times.map((t, i) => (i === 0 ? t : replayAtEnd(times)[i]!));
    const records = queuedLevel({ ...fastQueued, clients: 16, requests: 64, chunkGapMs: 2, deliver: replayRest });
    expect(streamingCheck(records).code).toBe('buffered-after-first');
  });

  it('a proxy flushing every 300 ms in front of a 10 ms/token server: fails as chunky, naming the bursts', () => {
    const records = queuedLevel({
      clients: 4,
      slots: 4,
      requests: 16,
      tokens: 128,
      prefillMs: 80,
      chunkGapMs: 10,
      deliver: flushEvery(300),
    });
    const t = streamTiming(records[0]!, hold);
    expect(t.shape).toBe('chunky');
    // 1.27 s of output: the first flush (the first token with 29 more), three more 300 ms apart; the last 70 ms is no hold.
    expect(t.bursts).toBe(4);
    const c = streamingCheck(records);
    expect(c.status).toBe('fail');
    expect(c.code).toBe('chunky');
    expect(c.facts).toMatchObject({ chunkyRequests: 16, burstsMedian: 4 });
    expect(c.facts!.heldShareMedian as number).toBeGreaterThan(0.9);
  });

  it('a proxy passing the stream on in 8 KB buffers (40 chunks a flush, 400 ms apart): fails as chunky', () => {
    const pages = (times: number[]): number[] =>
      times.map((_, i) => times[Math.min(times.length - 1, i - (i % 40) + 39)]!);
    const records = queuedLevel({ ...fastQueued, clients: 64, chunkGapMs: 10, mergeEvery: 0, deliver: pages });
    // The first page with the first token, two more 400 ms apart; the last 8 chunks were held only 80 ms.
    expect(streamTiming(records[0]!, hold)).toMatchObject({ shape: 'chunky', bursts: 3, heldTokens: 119 });
    expect(streamingCheck(records).code).toBe('chunky');
  });

  it('a buffering proxy in front of a diffusion model (its blocks together at the end): fails', () => {
    const records = queuedLevel({
      ...fastQueued,
      clients: 8,
      requests: 32,
      tokensPerChunk: 32,
      chunkGapMs: 20,
      deliver: oneReadAtEnd,
    });
    expect(streamTiming(records[0]!, hold).shape).toBe('buffered-whole');
    expect(streamingCheck(records).status).toBe('fail');
  });

  it('a proxy replaying the stream at 20,000 tok/s after it ended: fails on the server-decode mismatch', () => {
    // Paced, so no burst is faster than a decoder: only the server's own decode time gives it away.
    const paced = (times: number[]): number[] => times.map((_, i) => times[times.length - 1]! + 1 + i * 0.05);
    const records = withServerDecode(queuedLevel({ ...fastQueued, clients: 4, requests: 16, deliver: paced }), 254);
    expect(streamTiming(records[0]!, hold).shape).toBe('streamed');
    const c = streamingCheck(records);
    expect(c.status).toBe('fail');
    expect(c.code).toBe('server-decode-mismatch');
    expect(c.facts).toMatchObject({ serverDecodeMs: 254, serverTimedRequests: 16, serverDecodeShortRequests: 16 });
    expect(c.facts!.clientDecodeMs as number).toBeCloseTo(127 * 0.05, 6);
  });

  it('a server claiming a decode longer than its requests lasted: an impossible figure, no proof', () => {
    const records = withServerDecode(queuedLevel({ ...fastQueued, clients: 4, requests: 16, chunkGapMs: 2 }), 1e6);
    const c = streamingCheck(records);
    expect(c.code).toBe('streamed');
    expect(c.facts!.serverTimedRequests).toBeUndefined();
    const figure = { meanMs: 1e6, requests: 16, source: 'vllm:request_decode_time_seconds' };
    expect(streamingCheck(records, 2, figure).code).toBe('streamed');
  });

  it("the engine's level decode figure (vLLM's histogram) far above the client's spans: fails the same way", () => {
    const paced = (times: number[]): number[] => times.map((_, i) => times[times.length - 1]! + 1 + i * 0.05);
    const records = queuedLevel({ ...fastQueued, clients: 4, requests: 16, deliver: paced });
    const figure = { meanMs: 254, requests: 16, source: 'vllm:request_decode_time_seconds' };
    const c = streamingCheck(records, 2, figure);
    expect(c.code).toBe('server-decode-mismatch');
    expect(c.facts).toMatchObject({ serverDecodeSource: 'vllm:request_decode_time_seconds', serverDecodeMs: 254 });
    // The same spans as the engine's: a real stream.
    expect(streamingCheck(records, 2, { ...figure, meanMs: 6.5 }).code).toBe('streamed');
  });
});

describe('streaming verdict: what is not buffering', () => {
  it('a client whose loop was late 15 ms at times (the tokens of those 15 ms read at once): passes', () => {
    const lateReads = (times: number[]): number[] =>
      times.map((t) => {
        const phase = (t - times[0]!) % 100;
        return phase < 15 ? t - phase + 15 : t;
      });
    const records = queuedLevel({ ...fastQueued, clients: 4, requests: 16, chunkGapMs: 1, deliver: lateReads });
    const c = streamingCheck(records, 15);
    expect(c.code).toBe('streamed');
  });

  it('a busy client late 60 ms at p99, merging 60 ms of a fast stream into each read: never a failure', () => {
    const lateReads = (times: number[]): number[] =>
      times.map((t) => {
        const phase = (t - times[0]!) % 80;
        return phase < 60 ? t - phase + 60 : t;
      });
    const records = queuedLevel({ ...fastQueued, clients: 64, chunkGapMs: 1, deliver: lateReads });
    const c = streamingCheck(records, 60);
    expect(c.status).not.toBe('fail');
  });

  it('one short request in 30 merged whole by a stalled moment: passes; four in 30 warn as partly buffered', () => {
    const records = queuedLevel({ clients: 4, slots: 4, requests: 30, tokens: 24, prefillMs: 20, chunkGapMs: 8 });
    const merge = (r: RequestRecord): void => {
      r.chunks = r.chunks.map(([, n], i) => [r.chunks.at(-1)![0] + i * 0.001, n]);
    };
    merge(records[7]!);
    const one = streamingCheck(records);
    expect(one.code).toBe('streamed');
    expect(one.facts).toMatchObject({ bufferedWholeRequests: 1 });
    for (const r of records.slice(10, 13)) merge(r);
    const four = streamingCheck(records);
    expect(four.status).toBe('warn');
    expect(four.code).toBe('partly-buffered');
    expect(four.facts).toMatchObject({ bufferedWholeRequests: 4 });
  });

  it('a queued server whose stream stalls mid-way in one request: warns as a stall, not a burst', () => {
    const records = queuedLevel({ ...fastQueued, clients: 64, chunkGapMs: 10, mergeEvery: 0 });
    const stalled = records[100]!;
    stalled.chunks = stalled.chunks.map(([t, n], i) => [i >= 64 ? t + 2000 : t, n]);
    stalled.endMs = stalled.endMs! + 2000;
    const c = streamingCheck(records);
    expect(c.status).toBe('warn');
    expect(c.code).toBe('stalled');
    expect(c.facts).toMatchObject({ stalledRequests: 1, maxGapMs: 2010 });
  });

  it('a preempted request that resumes at its normal pace: a stall, not buffering', () => {
    const records = queuedLevel({ clients: 4, slots: 4, requests: 16, tokens: 128, prefillMs: 50, chunkGapMs: 10 });
    for (const r of records) r.chunks = r.chunks.map(([t, n], i) => [i >= 40 ? t + 900 : t, n]);
    expect(streamingCheck(records).code).toBe('stalled');
  });

  it('llama.cpp streaming with its own timings in agreement: passes', () => {
    const records = withServerDecode(queuedLevel({ ...fastQueued, clients: 4, requests: 16, chunkGapMs: 2 }), 256);
    const c = streamingCheck(records);
    expect(c.code).toBe('streamed');
    expect(c.facts).toMatchObject({ serverTimedRequests: 16, serverDecodeShortRequests: 0 });
  });
});
