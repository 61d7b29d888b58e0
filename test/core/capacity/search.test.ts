import { describe, expect, it } from 'vitest';
import { DEFAULT_CAPACITY_RESOLUTION, searchCapacity, type MeasureLevel } from '../../../src/core/capacity/search.js';
import { judgeSlo } from '../../../src/core/capacity/judge.js';
import { BASE_PROFILE, applyOverrides, type SimProfile } from '../../../src/core/sim/index.js';
import type { SloTarget } from '../../../src/shared/capacity.js';
import type { LevelResult } from '../../../src/shared/run-record.js';
import { fakeLevel, latency } from './fake-level.js';

/** The simulator's decode step at batch c (src/core/sim/scheduler.ts): TPOT when c requests decode together. */
const stepMs = (p: SimProfile, c: number): number => p.stepBaseMs + p.stepPerSeqMs * c;

/** The true capacity for a TPOT limit from the step model: the largest c whose step fits. */
function trueCapacity(p: SimProfile, limitMs: number): number {
  return Math.floor((limitMs - p.stepBaseMs) / p.stepPerSeqMs);
}

/** A measurer that reports the step model's TPOT with a narrow interval, and counts the levels asked for. */
function stepModelMeasurer(p: SimProfile, spread = 0.2): { measure: MeasureLevel; asked: number[] } {
  const asked: number[] = [];
  const measure: MeasureLevel = async (c) => {
    asked.push(c);
    const tpot = stepMs(p, c);
    return {
      level: fakeLevel(c, { tpotMs: latency(tpot, spread), outputTokPerSec: (1000 / tpot) * c }),
      levelIndex: asked.length - 1,
    };
  };
  return { measure, asked };
}

const tpot = (limitMs: number): SloTarget => ({ metric: 'tpot', percentile: 95, limitMs });

describe('searchCapacity', () => {
  it('finds the step model’s true capacity within one bracketing step, in fewer levels than a sweep', async () => {
    const profile = BASE_PROFILE; // 7 ms + 0.08 ms per sequence
    for (const limitMs of [12.5, 20.3, 33.1, 40]) {
      const truth = trueCapacity(profile, limitMs);
      const { measure, asked } = stepModelMeasurer(profile);
      const r = await searchCapacity({ mode: 'concurrency', targets: [tpot(limitMs)], start: 1, max: 512, measure });
      expect(r.outcome).toBe('bracketed');
      expect(r.capacity).not.toBeNull();
      expect(r.above).not.toBeNull();
      // The bracket holds the truth, and it is one resolution step wide.
      expect(r.capacity!).toBeLessThanOrEqual(truth);
      expect(r.above!).toBeGreaterThan(truth);
      expect(r.above! - r.capacity!).toBeLessThanOrEqual(Math.max(1, DEFAULT_CAPACITY_RESOLUTION * r.capacity!));
      // Doublings to the bound plus a few bisections at most.
      expect(asked.length).toBeLessThan(Math.log2(512) + 6);
      // A full sweep c = 1..above reaches the same bracket only after `above` levels.
      expect(asked.length).toBeLessThan(r.above!);
      expect(new Set(asked).size).toBe(asked.length);
    }
  });

  it('doubles then bisects: 1, 2, 4, … until a level fails, then halves the bracket', async () => {
    const p = applyOverrides(BASE_PROFILE, { 'step-base-ms': 2, 'step-per-seq-ms': 10 }, 't');
    const { measure, asked } = stepModelMeasurer(p);
    const r = await searchCapacity({ mode: 'concurrency', targets: [tpot(2 + 10 * 13.5)], start: 1, max: 64, measure });
    expect(asked).toEqual([1, 2, 4, 8, 16, 12, 14, 13]);
    expect([r.capacity, r.above]).toEqual([13, 14]);
  });

  it('stops at the bound when every level meets', async () => {
    const { measure, asked } = stepModelMeasurer(BASE_PROFILE);
    const r = await searchCapacity({ mode: 'concurrency', targets: [tpot(1000)], start: 4, max: 24, measure });
    expect(asked).toEqual([4, 8, 16, 24]);
    expect(r).toMatchObject({ outcome: 'max-reached', capacity: 24, above: null });
  });

  it('searches below the start when the first level already fails, and says when none meets', async () => {
    const p = applyOverrides(BASE_PROFILE, { 'step-base-ms': 2, 'step-per-seq-ms': 10 }, 't');
    const below = stepModelMeasurer(p);
    const r = await searchCapacity({
      mode: 'concurrency',
      targets: [tpot(35)],
      start: 16,
      max: 64,
      measure: below.measure,
    });
    expect([r.capacity, r.above]).toEqual([3, 4]);
    const none = stepModelMeasurer(p);
    const n = await searchCapacity({
      mode: 'concurrency',
      targets: [tpot(5)],
      start: 4,
      max: 64,
      measure: none.measure,
    });
    expect(n).toMatchObject({ outcome: 'none-meets', capacity: null, above: 1 });
  });

  it('treats an interval that straddles the limit as uncertain, not as meeting', async () => {
    const p = applyOverrides(BASE_PROFILE, { 'step-base-ms': 0, 'step-per-seq-ms': 10 }, 't');
    // Wide intervals: c=4 (40 ms, [30, 50]) straddles a 45 ms limit.
    const { measure } = stepModelMeasurer(p, 10);
    const r = await searchCapacity({ mode: 'concurrency', targets: [tpot(45)], start: 1, max: 64, measure });
    expect(r.capacity).toBe(3);
    const at4 = r.probes.find((x) => x.load === 4)!;
    expect(at4.verdict).toBe('uncertain');
    expect(at4.slos[0]).toMatchObject({ verdict: 'uncertain', valueMs: 40, ci: [30, 50] });
  });

  it('searches request rates in the open loop, to the resolution', async () => {
    // Latency climbs past 1 s once the rate passes 37 req/s.
    const measure: MeasureLevel = async (rate) => ({
      level: fakeLevel(0, { rate, ttftMs: latency(rate <= 37 ? 200 : 2000, 5), reqPerSec: Math.min(rate, 37) }),
      levelIndex: 0,
    });
    const r = await searchCapacity({
      mode: 'rate',
      targets: [{ metric: 'ttft', percentile: 99, limitMs: 1000 }],
      start: 2,
      max: 1000,
      measure,
    });
    expect(r.capacity!).toBeLessThanOrEqual(37);
    expect(r.above!).toBeGreaterThan(37);
    expect(r.above! - r.capacity!).toBeLessThanOrEqual(DEFAULT_CAPACITY_RESOLUTION * r.capacity!);
  });

  it('ends with what it has when a level measured nothing (cancelled)', async () => {
    let calls = 0;
    const measure: MeasureLevel = async (c) => (++calls > 2 ? null : { level: fakeLevel(c), levelIndex: calls - 1 });
    const r = await searchCapacity({ mode: 'concurrency', targets: [tpot(100)], start: 1, max: 64, measure });
    expect(r).toMatchObject({ outcome: 'stopped', capacity: 2, above: null });
  });
});

describe('judgeSlo', () => {
  const level = (parts: Partial<LevelResult>): LevelResult => fakeLevel(8, parts);
  it('meets only when the interval’s upper bound is within the limit, fails only when its lower bound is over', () => {
    expect(
      judgeSlo(level({ ttftMs: latency(480, 10) }), { metric: 'ttft', percentile: 95, limitMs: 500 }).verdict,
    ).toBe('meets');
    expect(
      judgeSlo(level({ ttftMs: latency(495, 10) }), { metric: 'ttft', percentile: 95, limitMs: 500 }).verdict,
    ).toBe('uncertain');
    expect(
      judgeSlo(level({ ttftMs: latency(612, 30) }), { metric: 'ttft', percentile: 95, limitMs: 500 }).verdict,
    ).toBe('fails');
  });
  it('counts failed requests as misses and a missing interval as uncertain', () => {
    const failing = judgeSlo(level({ completed: 90, failed: 10 }), { metric: 'ttft', percentile: 95, limitMs: 500 });
    expect(failing).toMatchObject({ verdict: 'fails', note: '10 % of requests failed' });
    const few = judgeSlo(level({ ttftMs: { ...latency(100), p95Ci: null } }), {
      metric: 'ttft',
      percentile: 95,
      limitMs: 500,
    });
    expect(few.verdict).toBe('uncertain');
  });
});
