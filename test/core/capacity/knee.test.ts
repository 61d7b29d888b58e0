import { describe, expect, it } from 'vitest';
import { findSaturation } from '../../../src/core/capacity/knee.js';
import type { LevelTelemetry } from '../../../src/shared/run-record.js';
import { fakeLevel, latency } from './fake-level.js';

const engine = (waitingPeak: number | null, preemptions: number | null): LevelTelemetry =>
  ({ waitingPeak, preemptions }) as LevelTelemetry;

/** Closed-loop levels where throughput saturates at `knee` requests in flight and latency then grows with load. */
function levels(knee: number, telemetry?: (c: number) => LevelTelemetry) {
  return [1, 2, 4, 8, 16, 32].map((c) => ({
    load: c,
    level: fakeLevel(c, {
      outputTokPerSec: 100 * Math.min(c, knee),
      e2eMs: latency(c <= knee ? 1000 : (1000 * c) / knee),
      telemetry: telemetry?.(c),
    }),
  }));
}

describe('findSaturation', () => {
  it('finds the level after which throughput stops rising while latency climbs', () => {
    const s = findSaturation(levels(8).reverse());
    expect(s).toMatchObject({ load: 8, nextLoad: 16, throughputGain: 0, latencyGain: 1, cause: 'unknown' });
    expect(s!.detail).toBe(
      'out tok/s +0 % for +100 % load, E2E p50 +100 %: no engine metrics to tell queueing from slower steps',
    );
  });

  it('names the engine queue, KV-cache preemptions, or neither, from the next level’s telemetry', () => {
    expect(findSaturation(levels(8, (c) => engine(c > 8 ? 12 : 0, 0)))).toMatchObject({ cause: 'queue' });
    expect(findSaturation(levels(8, (c) => engine(c > 8 ? 5 : 0, c > 8 ? 3 : 0)))).toMatchObject({ cause: 'kv-cache' });
    expect(findSaturation(levels(8, () => engine(0, 0)))).toMatchObject({ cause: 'compute' });
  });

  it('reports no knee while throughput keeps scaling, or when latency does not climb', () => {
    expect(findSaturation(levels(64))).toBeNull();
    const flatButFast = [1, 2, 4].map((c) => ({ load: c, level: fakeLevel(c, { outputTokPerSec: 100 }) }));
    expect(findSaturation(flatButFast)).toBeNull();
  });

  it('uses req/s in the open loop, where it follows the rate until the server saturates', () => {
    const points = [2, 4, 8, 16].map((rate) => ({
      load: rate,
      level: fakeLevel(0, { rate, reqPerSec: Math.min(rate, 4.5), e2eMs: latency(rate > 4.5 ? 5000 : 900) }),
    }));
    expect(findSaturation(points)).toMatchObject({ load: 4, nextLoad: 8 });
  });
});
