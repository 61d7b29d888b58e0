import { describe, expect, it } from 'vitest';
import { MIN_WARMUP_REQUESTS, credibleRequestsPerRound, planLevels } from '../../../src/core/load/level-plan.js';
import { minSamplesForCi } from '../../../src/core/metrics/percentiles.js';
import { BenchConfigSchema } from '../../../src/shared/config.js';

describe('planLevels defaults', () => {
  it('plans enough requests at every level for p95 and p99 intervals, whatever the rounds', () => {
    for (const rounds of [1, 2, 3, 5, 7]) {
      const plans = planLevels(BenchConfigSchema.parse({ concurrency: [1, 4, 16, 256], rounds }));
      for (const p of plans) {
        expect(p.rounds * p.requestsPerRound).toBeGreaterThanOrEqual(minSamplesForCi(99)!);
        expect(p.requestsPerRound).toBeGreaterThanOrEqual(4 * p.concurrency);
      }
    }
    expect(credibleRequestsPerRound(3)).toBe(Math.ceil(minSamplesForCi(99)! / 3));
  });

  it('open-loop levels get as many', () => {
    const [p] = planLevels(BenchConfigSchema.parse({ rate: [2], rounds: 3 }));
    expect(p!.rounds * p!.requestsPerRound).toBeGreaterThanOrEqual(minSamplesForCi(99)!);
  });

  it('warms up with at least MIN_WARMUP_REQUESTS, and with two whole waves at high concurrency', () => {
    const plans = planLevels(BenchConfigSchema.parse({ concurrency: [1, 64] }));
    expect(plans.map((p) => p.warmup)).toEqual([MIN_WARMUP_REQUESTS, 128]);
  });

  it('keeps what the user set', () => {
    const [p] = planLevels(BenchConfigSchema.parse({ concurrency: [2], requestsPerRound: 6, warmup: 0, rounds: 1 }));
    expect(p).toMatchObject({ requestsPerRound: 6, warmup: 0, rounds: 1 });
  });

  it('defaults to fixed lengths and levels a 2-core demo can finish: 1, 4, 16 at 512 in, 24 out', () => {
    const plans = planLevels(BenchConfigSchema.parse({}));
    expect(plans.map((p) => [p.concurrency, p.inputLen, p.outputLen])).toEqual([
      [1, 512, 24],
      [4, 512, 24],
      [16, 512, 24],
    ]);
  });
});
