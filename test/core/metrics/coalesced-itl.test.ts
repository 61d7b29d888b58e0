import { describe, expect, it } from 'vitest';
import { coalescedItl, isCoalescedGap, serverItlMs } from '../../../src/core/metrics/coalesced-itl.js';
import { summarizeLevel } from '../../../src/core/metrics/level-summary.js';
import type { RequestRecord } from '../../../src/shared/request-record.js';
import { makeRecord } from './make-record.js';

/**
 * A llama.cpp-like stream of 64 tokens, one event each, 0.45 ms apart on the server; the client reads `perRead`
 * events at a time (its reads come late at high concurrency), stamping them 0.001 ms apart as it parses one read.
 */
function coalescedStream(id: number, perRead: number, serverTimed = true): RequestRecord {
  const tokens = 64;
  const tokenMs = 0.45;
  const chunks: Array<[number, number]> = [];
  for (let i = 0; i < tokens; i++) {
    const readAt = 10 + Math.floor(i / perRead) * perRead * tokenMs;
    chunks.push([readAt + (i % perRead) * 0.001, 1]);
  }
  return makeRecord({
    id,
    sendMs: 0,
    firstTokenMs: chunks[0]![0],
    endMs: chunks.at(-1)![0] + 0.1,
    chunks,
    nOut: tokens,
    expectedOut: tokens,
    clientChunkCount: tokens,
    ...(serverTimed ? { serverPromptMs: 5, serverDecodeMs: (tokens - 1) * tokenMs } : {}),
  });
}

const level = (records: RequestRecord[]) =>
  summarizeLevel({
    records,
    concurrency: 16,
    inputLen: 8,
    outputLen: 64,
    rounds: 1,
    warmupRequests: 0,
    serverConfigIndex: 0,
    uniquePrefix: true,
  });

describe('ITL from coalesced reads', () => {
  it('a gap shorter than its tokens take at the fastest decoder came in one read', () => {
    expect(isCoalescedGap(0.001, 1)).toBe(true);
    expect(isCoalescedGap(0, 1)).toBe(true);
    expect(isCoalescedGap(0.45, 1)).toBe(false);
    expect(isCoalescedGap(0.03, 4)).toBe(true);
  });

  it("three events a read: the streaming check says ITL is the client's reads and gives the server's time per token", () => {
    const result = level(Array.from({ length: 20 }, (_, i) => coalescedStream(i, 3)));
    // The figure that misled: two gaps in three are a parse step apart.
    expect(result.itlMs.p50).toBeLessThan(0.01);
    expect(result.itlCoalescedShare).toBeCloseTo(42 / 63, 6);
    expect(result.serverItlMs?.p50).toBeCloseTo(0.45, 6);
    const streaming = result.checks.find((c) => c.id === 'streaming')!;
    expect(streaming).toMatchObject({ status: 'warn', code: 'itl-coalesced' });
    expect(streaming.facts).toMatchObject({ coalescedGaps: 840, itlGaps: 1260 });
    expect(streaming.facts?.serverItlP50Ms).toBeCloseTo(0.45, 6);
  });

  it('without server timings the time per token is TPOT', () => {
    const result = level(Array.from({ length: 20 }, (_, i) => coalescedStream(i, 3, false)));
    expect(result.serverItlMs).toBeUndefined();
    const streaming = result.checks.find((c) => c.id === 'streaming')!;
    expect(streaming.code).toBe('itl-coalesced');
    expect(streaming.facts?.serverItlP50Ms).toBeNull();
  });

  it('one event a read: streamed, and the server figure is still recorded', () => {
    const result = level(Array.from({ length: 20 }, (_, i) => coalescedStream(i, 1)));
    expect(result.itlCoalescedShare).toBe(0);
    expect(result.checks.find((c) => c.id === 'streaming')).toMatchObject({ status: 'pass', code: 'streamed' });
    expect(result.serverItlMs?.p50).toBeCloseTo(0.45, 6);
  });

  it('an impossible server decode time (longer than the request lasted) is no time per token', () => {
    const r = { ...coalescedStream(0, 1), serverDecodeMs: 1e6 };
    expect(serverItlMs(r)).toBeNull();
    expect(coalescedItl([r]).serverItlMs).toEqual([]);
  });
});
