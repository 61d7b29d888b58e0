import { describe, expect, it } from 'vitest';
import type { LevelPlan } from '../../../src/core/load/level-plan.js';
import { apportion, checkSplit, evenSplit, shareOf } from '../../../src/core/distributed/split.js';

const closed: LevelPlan = { concurrency: 10, inputLen: 64, outputLen: 16, rounds: 3, requestsPerRound: 40, warmup: 24 };
const shares = (plan: LevelPlan, n: number) => Array.from({ length: n }, (_, r) => shareOf(plan, r, n));
const total = (p: LevelPlan): number => p.warmup + p.rounds * p.requestsPerRound;

describe('apportion and evenSplit', () => {
  it('sum to the total exactly, give nothing to a zero weight, and spread the remainder from the lowest rank', () => {
    expect(apportion(40, [4, 3, 3])).toEqual([16, 12, 12]);
    expect(apportion(7, [1, 0, 1])).toEqual([4, 0, 3]);
    expect(evenSplit(10, 3)).toEqual([4, 3, 3]);
    expect(evenSplit(2, 4)).toEqual([1, 1, 0, 0]);
    for (const t of [0, 1, 17, 1000]) expect(apportion(t, [5, 2, 9, 1]).reduce((a, b) => a + b, 0)).toBe(t);
  });
});

describe('shareOf', () => {
  it('splits closed-loop concurrency into shares summing to C, and each round in proportion to them', () => {
    const s = shares(closed, 3);
    expect(s.map((x) => x.plan.concurrency)).toEqual([4, 3, 3]);
    expect(s.map((x) => x.plan.requestsPerRound)).toEqual([16, 12, 12]);
    expect(s.reduce((a, x) => a + x.plan.warmup, 0)).toBe(24);
  });

  it('gives every prompt place of the level to exactly one worker, and each worker its own block of request ids', () => {
    const s = shares(closed, 3);
    const places = s.flatMap((x) => x.positions).sort((a, b) => a - b);
    expect(places).toEqual(Array.from({ length: total(closed) }, (_, i) => i));
    expect(s.map((x) => x.firstIdOffset)).toEqual([0, total(s[0]!.plan), total(s[0]!.plan) + total(s[1]!.plan)]);
    for (const x of s) expect(x.positions.length).toBe(total(x.plan));
  });

  it('lets a worker idle when the concurrency is below the world size', () => {
    const s = shares({ ...closed, concurrency: 1, requestsPerRound: 8, warmup: 2 }, 3);
    expect(s.map((x) => x.plan.concurrency)).toEqual([1, 0, 0]);
    expect(s.map((x) => x.positions.length)).toEqual([2 + 3 * 8, 0, 0]);
  });

  it('gives each worker a Poisson process at rate λ/N, the cap split likewise', () => {
    const s = shares({ ...closed, concurrency: 8, rate: 12, maxInFlight: 8 }, 4);
    expect(s.map((x) => x.plan.rate)).toEqual([3, 3, 3, 3]);
    expect(s.map((x) => x.plan.maxInFlight)).toEqual([2, 2, 2, 2]);
    expect(s.reduce((a, x) => a + x.plan.requestsPerRound, 0)).toBe(40);
    expect(() => checkSplit([{ ...closed, rate: 5, maxInFlight: 2 }], 3)).toThrow(/--max-concurrency 2 over 3 workers/);
  });

  it('keeps conversations whole: each worker gets whole conversations of K turns', () => {
    const plan: LevelPlan = { ...closed, concurrency: 5, turns: 3, requestsPerRound: 15 * 3, warmup: 6 };
    const s = shares(plan, 2);
    for (const x of s) {
      expect(x.plan.requestsPerRound % 3).toBe(0);
      for (let i = 0; i < x.positions.length; i += 3) expect(x.positions[i]! % 3).toBe(0);
    }
    expect(s.reduce((a, x) => a + x.plan.requestsPerRound, 0)).toBe(45);
  });

  it("sends each trace entry to one worker by index, at the trace's own time", () => {
    const schedule = [100, 150, 220, 400, 410, 900, 950];
    const plan: LevelPlan = { ...closed, concurrency: 0, rounds: 2, requestsPerRound: 7, warmup: 3, schedule, rate: 7 };
    const s = shares(plan, 3);
    expect(s[1]!.plan.schedule).toEqual([150, 410]);
    expect(s.map((x) => x.plan.scheduleOriginMs)).toEqual([100, 100, 100]);
    expect(s[2]!.positions).toEqual([2, 3 + 2, 3 + 5, 10 + 2, 10 + 5]);
    const all = s.flatMap((x) => x.positions).sort((a, b) => a - b);
    expect(all).toEqual(Array.from({ length: 3 + 14 }, (_, i) => i));
  });

  it('is the whole level for one worker', () => {
    expect(shareOf(closed, 0, 1).plan).toEqual(closed);
  });
});
