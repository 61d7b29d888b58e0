import { describe, expect, it } from 'vitest';
import { burstReason, streamArrival, streamingCheck, streamingShape } from '../../../src/core/metrics/checks.js';
import { requestMetrics } from '../../../src/core/metrics/request-metrics.js';
import { firstThenRest, oneReadAtEnd, queuedLevel, replayAtEnd } from './queued-level.js';

// A fast server with 4 slots behind a deep queue: 300 ms prefill, then 128 tokens every 0.3 ms, one write each;
// every 8th token shares a network read with the one before (the client read two writes at once).
// The old rule: a chunk span under this share of E2E, after a TTFT over half of it, was called buffered.
const OLD_SPAN_SHARE = 0.05;

const fastQueued = { slots: 4, requests: 320, tokens: 128, prefillMs: 300, chunkGapMs: 0.3, mergeEvery: 8 };

describe('streaming verdict under queueing', () => {
  it('queued fast server at c=64: passes, though its chunk span is a tiny share of E2E', () => {
    const records = queuedLevel({ ...fastQueued, clients: 64 });
    // The shape that fooled the old rule (chunk span under 5 % of E2E after a TTFT over half of it) in most requests.
    const spanRuleBuffered = records.filter((r) => {
      const m = requestMetrics(r);
      return streamArrival(r).spanMs / m.e2eMs! < OLD_SPAN_SHARE && m.ttftMs! / m.e2eMs! > 0.5;
    });
    expect(spanRuleBuffered.length * 2).toBeGreaterThan(records.length);
    expect(streamArrival(records[0]!).reads).toBe(113);
    const c = streamingCheck(records);
    expect(c.status).toBe('pass');
    expect(c.detail).toContain('median 128 chunks per request in 113 distinct network reads');
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
    expect(streamingCheck(records).status).toBe('pass');
  });

  it('diffusion model streaming whole blocks behind a queue: passes', () => {
    const records = queuedLevel({
      ...fastQueued,
      clients: 64,
      tokensPerChunk: 32,
      chunkGapMs: 20,
      mergeEvery: 0,
    });
    expect(streamArrival(records[0]!)).toMatchObject({ chunks: 4, reads: 4 });
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
});

describe('streaming verdict on buffering proxies', () => {
  it('buffering proxy (every chunk in one read at the end) at c=64: fails', () => {
    const records = queuedLevel({ ...fastQueued, clients: 64, deliver: oneReadAtEnd });
    expect(burstReason(records[0]!)).toBe('one-read');
    const c = streamingCheck(records);
    expect(c.status).toBe('fail');
    expect(c.detail).toContain('320/320 multi-token requests arrived in one burst (0 in a single chunk, 320 buffered');
    expect(c.detail).toContain(
      '— 320 with all chunks in one network read; median 128 chunks per request in 1 distinct network read over 0 ms: the server or a proxy is not streaming',
    );
  });

  it('bursts while the client itself lagged past its limit: a warning that cannot tell, never a fail', () => {
    const records = queuedLevel({ ...fastQueued, clients: 64, deliver: oneReadAtEnd });
    expect(streamingCheck(records, 5).status).toBe('fail'); // a healthy client: the reads are evidence
    const c = streamingCheck(records, 180);
    expect(c.status).toBe('warn');
    expect(c.detail).toMatch(/^cannot tell whether the server streams: .* lagged 180 ms \(p99\)/);
  });

  it('proxy flushing one token early, the rest in one read at the end: fails', () => {
    const records = queuedLevel({ ...fastQueued, clients: 64, deliver: firstThenRest });
    expect(burstReason(records[0]!)).toBe('most-in-one-read');
    expect(streamingCheck(records).status).toBe('fail');
  });

  it('whole output within a millisecond after a long wait, each token its own read: passes (reads decide, not pace)', () => {
    // A server whose prefill or queue dominates decodes in bursts far faster than its average output rate; a proxy
    // replaying a buffer event by event would look the same, and only the network reads could tell them apart.
    const records = queuedLevel({ ...fastQueued, clients: 64, deliver: replayAtEnd });
    expect(streamArrival(records[0]!).reads).toBe(128);
    expect(burstReason(records[0]!)).toBeNull();
    expect(streamingCheck(records).status).toBe('pass');
  });

  it('buffering proxy in front of a diffusion model (its blocks in one read): fails', () => {
    const records = queuedLevel({
      ...fastQueued,
      clients: 8,
      requests: 32,
      tokensPerChunk: 32,
      chunkGapMs: 20,
      deliver: oneReadAtEnd,
    });
    expect(streamingShape(records[0]!)).toBe('buffered');
    expect(streamingCheck(records).status).toBe('fail');
  });

  it('proxy passing the stream on in 8 KB buffers (about 40 chunks per read, over time): warns as clumped', () => {
    const pages = (times: number[]): number[] =>
      times.map((_, i) => times[Math.min(times.length - 1, i - (i % 40) + 39)]!);
    const records = queuedLevel({ ...fastQueued, clients: 64, chunkGapMs: 10, mergeEvery: 0, deliver: pages });
    expect(streamArrival(records[0]!)).toMatchObject({ chunks: 128, reads: 4, largestRead: 40 });
    const c = streamingCheck(records);
    expect(c.status).toBe('warn');
    expect(c.detail).toMatch(/^tokens arrived over time but in clumps of 32 chunks per network read/);
  });

  it('a queued server whose stream stalls mid-way in one request: warns as a stall, not a burst', () => {
    const records = queuedLevel({ ...fastQueued, clients: 64, chunkGapMs: 10, mergeEvery: 0 });
    const stalled = records[100]!;
    stalled.chunks = stalled.chunks.map(([t, n], i) => [i >= 64 ? t + 2000 : t, n]);
    stalled.endMs = stalled.endMs! + 2000;
    const c = streamingCheck(records);
    expect(c.status).toBe('warn');
    expect(c.detail).toMatch(/^1\/320 requests paused mid-stream/);
  });
});
