import { describe, expect, it } from 'vitest';
import { createRng } from '../../../src/core/rng.js';
import {
  driftPpm,
  estimateOffset,
  measureOffset,
  offsetAt,
  type PingSample,
} from '../../../src/core/distributed/clock-sync.js';

/**
 * Two virtual clocks: rank 0 reads worker time + trueOffset. Each ping waits a random one-way delay out and back
 * (queueing: a heavy tail), so the estimate can be held against the truth.
 */
function virtualPings(trueOffset: number, seed: number, skew = 0) {
  const rng = createRng(seed);
  let now = 1000;
  const delay = (): number => 0.05 + (rng() < 0.3 ? rng() * 20 : rng() * 0.2);
  return async (): Promise<PingSample> => {
    const t1 = now;
    now += delay();
    const t2 = now + trueOffset + skew * now;
    const t3 = t2 + 0.01;
    now += 0.01 + delay();
    return { t1, t2, t3, t4: now };
  };
}

describe('clock offset from pings', () => {
  it('holds the true offset within its stated uncertainty, whatever the queueing on the way', async () => {
    for (const [offset, seed] of [
      [322.9, 1],
      [-50, 2],
      [0, 3],
      [1e6, 4],
    ] as const) {
      const est = (await measureOffset(virtualPings(offset, seed)))!;
      expect(Math.abs(est.offsetMs - offset)).toBeLessThanOrEqual(est.uncertaintyMs + 1e-9);
      expect(est.uncertaintyMs).toBeLessThan(1);
      expect(est.pings).toBe(32);
    }
  });

  it('keeps the minimum-delay sample: one slow ping does not move the estimate', () => {
    const fast: PingSample = { t1: 0, t2: 100.5, t3: 100.5, t4: 1 };
    const slow: PingSample = { t1: 10, t2: 150, t3: 150, t4: 50 };
    expect(estimateOffset([slow, fast])).toMatchObject({ offsetMs: 100, uncertaintyMs: 0.5, rttMs: 1 });
    expect(estimateOffset([])).toBeNull();
  });

  it('subtracts the time rank 0 held a ping from its round trip', () => {
    const e = estimateOffset([{ t1: 0, t2: 10, t3: 14, t4: 6 }])!;
    expect(e.rttMs).toBe(2);
    expect(e.offsetMs).toBe(9);
  });

  it('interpolates between the estimates around a level, and shows a drift beyond the noise', () => {
    const before = { offsetMs: 10, uncertaintyMs: 0.1, rttMs: 0.2, atMs: 0, pings: 32 };
    const after = { offsetMs: 12, uncertaintyMs: 0.1, rttMs: 0.2, atMs: 100_000, pings: 32 };
    expect(offsetAt(50_000, before, after)).toBe(11);
    expect(offsetAt(-5, before, after)).toBe(10);
    expect(offsetAt(200_000, before, after)).toBe(12);
    expect(offsetAt(5, null, after)).toBe(12);
    expect(offsetAt(5, null, null)).toBeNull();
    expect(driftPpm(before, after)).toBeCloseTo(20, 6);
    expect(driftPpm(before, { ...after, offsetMs: 10.15 })).toBeNull();
  });
});
