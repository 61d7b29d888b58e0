import { describe, expect, it } from 'vitest';
import { goodput, meetsSlo } from '../../../src/core/metrics/goodput.js';
import { failed, makeRecord, streamed } from './make-record.js';

describe('goodput', () => {
  // ttft 100, e2e 130, tpot (130-100)/3 = 10
  const fast = streamed({ ttftMs: 100, gapMs: 10, chunks: 4 });
  // ttft 300, e2e 330, tpot 10
  const slowStart = streamed({ ttftMs: 300, gapMs: 10, chunks: 4 });
  // ttft 100, e2e 190, tpot 30
  const slowDecode = streamed({ ttftMs: 100, gapMs: 30, chunks: 4 });

  it('requires every SLO given', () => {
    expect(meetsSlo(fast, { ttftMs: 200, tpotMs: 20 })).toBe(true);
    expect(meetsSlo(slowStart, { ttftMs: 200, tpotMs: 20 })).toBe(false);
    expect(meetsSlo(slowDecode, { ttftMs: 200, tpotMs: 20 })).toBe(false);
    expect(meetsSlo(slowDecode, { ttftMs: 200 })).toBe(true);
    expect(meetsSlo(fast, { e2eMs: 129 })).toBe(false);
    expect(meetsSlo(fast, { e2eMs: 130 })).toBe(true); // meeting means <=
  });

  it('counts failed requests as not meeting and skips warm-up', () => {
    const warm = makeRecord({ round: -1, warmup: true });
    const records = [fast, slowStart, slowDecode, failed(0, 10, 'http-500'), warm];
    // 1 of 4 measured requests meets both SLOs
    expect(goodput(records, { ttftMs: 200, tpotMs: 20 })).toBe(0.25);
    // TTFT only: fast and slowDecode -> 2/4
    expect(goodput(records, { ttftMs: 200 })).toBe(0.5);
    expect(goodput([warm], { ttftMs: 200 })).toBeNull();
  });

  it('leaves user-cancelled requests out; a dead server still counts against it', () => {
    const records = [fast, slowStart, failed(0, 10, 'cancelled'), failed(0, 10, 'cancelled')];
    expect(goodput(records, { ttftMs: 200 })).toBe(0.5); // 1 of 2, not 1 of 4
    expect(goodput([fast, failed(0, 10, 'server-died')], { ttftMs: 200 })).toBe(0.5);
  });
});
