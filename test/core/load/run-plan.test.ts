import { describe, expect, it } from 'vitest';
import { planLevels } from '../../../src/core/load/level-plan.js';
import { paceOfRecord, planRun } from '../../../src/core/load/run-plan.js';
import { BenchConfigSchema } from '../../../src/shared/config.js';
import type { LevelResult } from '../../../src/shared/run-record.js';

const plan = (input: Record<string, unknown>, extra: Partial<Parameters<typeof planRun>[0]> = {}) => {
  const config = BenchConfigSchema.parse(input);
  return planRun({ config, plans: planLevels(config), ...extra });
};

/** A recorded level: its load, warm-up and rounds, over a span of `spanMs`. */
const recorded = (concurrency: number, requests: number, spanMs: number, outputLen = 128): LevelResult =>
  ({
    concurrency,
    outputLen,
    warmupRequests: 0,
    rounds: [{ completed: requests, failed: 0 }],
    startMs: 1000,
    endMs: 1000 + spanMs,
  }) as unknown as LevelResult;

describe('planRun', () => {
  it('counts levels x (warm-up + rounds x requests per round), every server configuration', () => {
    const p = plan({
      concurrency: [1, 8],
      rounds: 3,
      requestsPerRound: 100,
      warmup: 10,
      serverVariants: [{ maxNumSeqs: 8 }, { maxNumSeqs: 16 }],
    });
    expect(p).toMatchObject({ levels: 4, serverConfigs: 2, rounds: 3, warmupRequests: 40, requests: 4 * 310 });
  });

  it('times an open-loop plan by its arrivals: requests / rate', () => {
    const p = plan({ rate: [2, 4], rounds: 1, requestsPerRound: 40, warmup: 0 });
    expect(p.basis).toBe('arrivals');
    expect(p.seconds).toBeCloseTo(40 / 2 + 40 / 4, 9);
  });

  it('gives no time for a closed-loop plan with no pace to go by', () => {
    const p = plan({ concurrency: [4], rounds: 2, requestsPerRound: 50 });
    expect(p.seconds).toBeNull();
    expect(p.basis).toBe('none');
  });

  it('times a re-run at the pace its recorded run kept', () => {
    // 200 requests in 10 s at c=4: 20 req/s; the same level again of 2 x 100 + 8 warm-up takes 10.4 s.
    const paces = paceOfRecord([recorded(4, 200, 10_000)]);
    const p = plan({ concurrency: [4], rounds: 2, requestsPerRound: 100, warmup: 8, outputLen: [128] }, { paces });
    expect(p.basis).toBe('recorded');
    expect(p.seconds).toBeCloseTo(208 / 20, 9);
  });

  it('says what the figure leaves out and that --precision may end rounds early', () => {
    const p = plan({ rate: [1], coolDownToC: 50, precision: '5%' });
    expect(p.excludes).toEqual(['launch', 'calibration', 'cool-down']);
    expect(p.atMost).toBe(true);
    expect(plan({ rate: [1] }).excludes).toEqual(['launch', 'calibration']);
  });

  it('a capacity search has its most levels and no requests or time known before', () => {
    const config = BenchConfigSchema.parse({ findCapacity: true });
    const p = planRun({ config, plans: [], capacityLevels: 7 });
    expect(p).toMatchObject({ capacity: true, levels: 7, requests: 0, seconds: null });
  });
});
