import { describe, expect, it } from 'vitest';
import { isMeasured, poolLatencies, requestMetrics } from '../../../src/core/metrics/request-metrics.js';
import { failed, makeRecord, streamed } from './make-record.js';

describe('requestMetrics', () => {
  it('derives TTFT, E2E, TPOT, ITL and ITL per token from a hand-built record', () => {
    // send 1000; chunks at 1120 (1 tok), 1130 (2 tok), 1150 (1 tok); end 1155; nOut 4.
    const r = makeRecord({
      sendMs: 1000,
      firstTokenMs: 1120,
      endMs: 1155,
      chunks: [
        [1120, 1],
        [1130, 2],
        [1150, 1],
      ],
      nOut: 4,
      clientChunkCount: 3,
    });
    const m = requestMetrics(r);
    expect(m.ttftMs).toBe(120); // 1120 - 1000
    expect(m.e2eMs).toBe(155); // 1155 - 1000
    expect(m.tpotMs).toBeCloseTo(35 / 3, 12); // (155 - 120) / (4 - 1)
    expect(m.itlMs).toEqual([10, 20]); // 1130 - 1120, 1150 - 1130
    expect(m.itlPerTokenMs).toEqual([5, 20]); // 10 / 2 tokens, 20 / 1 token
    expect(m.tokensPerChunk).toEqual([1, 2, 1]);
  });

  it('treats a diffusion stream of 32-token blocks: ITL is the block time, ITL per token a 32nd of it', () => {
    // 8 blocks of 32 tokens: first at 300 ms, then every 64 ms; end 2 ms after the last block.
    const r = streamed({ sendMs: 0, ttftMs: 300, gapMs: 64, chunks: 8, tokensPerChunk: 32, tailMs: 2 });
    const m = requestMetrics(r);
    expect(r.nOut).toBe(256);
    expect(m.ttftMs).toBe(300);
    expect(m.e2eMs).toBe(300 + 7 * 64 + 2); // 750
    expect(m.tpotMs).toBeCloseTo((750 - 300) / 255, 12);
    expect(m.itlMs).toEqual(Array(7).fill(64));
    expect(m.itlPerTokenMs).toEqual(Array(7).fill(2)); // 64 / 32
    expect(m.tokensPerChunk).toEqual(Array(8).fill(32));
  });

  it('ignores a role-only first chunk: it is not in chunks and TTFT is the first text chunk', () => {
    // The role-only chunk came at 5 ms; the client did not record it as token-bearing.
    const r = makeRecord({
      sendMs: 0,
      firstTokenMs: 40,
      endMs: 60,
      chunks: [
        [40, 1],
        [50, 1],
        [60, 1],
      ],
      nOut: 3,
      clientChunkCount: 3,
    });
    const m = requestMetrics(r);
    expect(m.ttftMs).toBe(40);
    expect(m.itlMs).toEqual([10, 10]);
    expect(m.tpotMs).toBe(10); // (60 - 40) / 2
  });

  it('has no TPOT when the whole output came in one chunk (a diffusion block): no decoding was seen', () => {
    const block = requestMetrics(
      makeRecord({ sendMs: 0, firstTokenMs: 165, endMs: 165.04, chunks: [[165, 16]], nOut: 16, clientChunkCount: 1 }),
    );
    expect(block.ttftMs).toBe(165);
    // (E2E - TTFT) / 15 would be 0.003 ms: a made-up 400,000 tok/s per user.
    expect(block.tpotMs).toBeNull();
    const two = requestMetrics(
      makeRecord({
        sendMs: 0,
        firstTokenMs: 100,
        endMs: 200,
        chunks: [
          [100, 16],
          [200, 16],
        ],
        nOut: 32,
      }),
    );
    expect(two.tpotMs).toBeCloseTo(100 / 31, 12);
  });

  it('has no TPOT for a single-token answer and no per-token ITL for a zero-token chunk', () => {
    const one = requestMetrics(makeRecord({ sendMs: 0, firstTokenMs: 30, endMs: 31, chunks: [[30, 1]], nOut: 1 }));
    expect(one.tpotMs).toBeNull();
    expect(one.itlMs).toEqual([]);
    const zero = requestMetrics(
      makeRecord({
        sendMs: 0,
        firstTokenMs: 10,
        endMs: 30,
        chunks: [
          [10, 1],
          [20, 0],
          [30, 1],
        ],
        nOut: 2,
      }),
    );
    expect(zero.itlMs).toEqual([10, 10]);
    expect(zero.itlPerTokenMs).toEqual([10]);
  });

  it('gives null TTFT/E2E when the stream never produced them', () => {
    const m = requestMetrics(failed(0, null, 'timeout'));
    expect(m.ttftMs).toBeNull();
    expect(m.e2eMs).toBeNull();
    expect(m.tpotMs).toBeNull();
  });
});

describe('poolLatencies', () => {
  it('pools only ok, measured requests', () => {
    const a = streamed({ ttftMs: 100, gapMs: 10, chunks: 3 });
    const b = streamed({ ttftMs: 200, gapMs: 20, chunks: 2 });
    const warm = streamed({ ttftMs: 999, chunks: 2 }, { round: -1, warmup: true });
    const bad = failed(0, 50, 'http-500', { firstTokenMs: 20, chunks: [[20, 1]] });
    const pooled = poolLatencies([a, b, warm, bad]);
    expect(pooled.ttftMs).toEqual([100, 200]);
    expect(pooled.e2eMs).toEqual([120, 220]);
    expect(pooled.tpotMs).toEqual([10, 20]); // (120-100)/2, (220-200)/1
    expect(pooled.itlMs).toEqual([10, 10, 20]);
    expect(isMeasured(warm)).toBe(false);
    expect(isMeasured(a)).toBe(true);
  });
});
