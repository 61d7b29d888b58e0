import { describe, expect, it } from 'vitest';
import { summarizeLevel } from '../../../src/core/metrics/level-summary.js';
import { OPEN_LOOP_FALSE_FAIL_RATE, openLoopSpread } from '../../../src/core/metrics/open-loop-spread.js';
import type { Check } from '../../../src/shared/run-record.js';
import { capacityReqPerSec, idealLevel, type IdealServer } from './ideal-open-loop.js';

const SERVER: IdealServer = { slots: 8, outputLen: 128, stepMs: 10, perSlotMs: 1 };
const LEVELS = 300;

/** The round-spread check of one simulated open-loop level, as a run computes it. */
function spreadOf(server: IdealServer, rounds: number, requestsPerRound: number, rho: number, seed: number): Check {
  const rate = rho * capacityReqPerSec(server);
  const records = idealLevel(server, { rounds, requestsPerRound, rate }, seed);
  const level = summarizeLevel({
    records,
    concurrency: 0,
    rate,
    inputLen: 8,
    outputLen: server.outputLen,
    rounds,
    warmupRequests: 0,
    serverConfigIndex: 0,
    uniquePrefix: true,
  });
  return level.checks.find((c) => c.id === 'round-spread')!;
}

/** Share of LEVELS simulated levels whose round-spread check fails. */
function failRate(server: IdealServer, rounds: number, n: number, rho: number): number {
  let fails = 0;
  for (let seed = 1; seed <= LEVELS; seed++) if (spreadOf(server, rounds, n, rho, seed).status === 'fail') fails++;
  return fails / LEVELS;
}

// rounds x requests per round: the open-loop default (3 x 100), the report's 2 x 40, and small rounds.
const SHAPES: Array<[number, number]> = [
  [3, 100],
  [2, 40],
  [5, 20],
  [2, 10],
];
// Offered load over the server's capacity: idle most of the time, near it, at it, past it.
const LOADS = [0.3, 0.9, 1, 1.2, 3];

describe('round spread in open loop, on an ideal server (steady speed, Poisson arrivals)', () => {
  it.each(SHAPES.flatMap(([r, n]) => LOADS.map((rho) => [r, n, rho] as const)))(
    `%i rounds x %i requests at %f x capacity: fails in at most ${OPEN_LOOP_FALSE_FAIL_RATE * 100} % of levels`,
    (rounds, n, rho) => {
      expect(failRate(SERVER, rounds, n, rho)).toBeLessThanOrEqual(OPEN_LOOP_FALSE_FAIL_RATE);
    },
  );

  it('2 x 40 at 0.3 x capacity: the raw CV is over 15 % in many levels, and the check says their arrivals did it', () => {
    const checks = Array.from({ length: LEVELS }, (_, i) => spreadOf(SERVER, 2, 40, 0.3, i + 1));
    const overRaw = checks.filter((c) => (c.facts?.cv as number) > 0.15);
    // The 15 % rule on raw throughput failed these levels (about a third) on a server whose speed never changed.
    expect(overRaw.length / LEVELS).toBeGreaterThan(0.2);
    for (const c of overRaw) {
      expect(c).toMatchObject({ status: 'pass', code: 'spread-follows-arrivals' });
      expect(c.facts?.shareCv as number).toBeLessThanOrEqual(0.15);
    }
  });

  it('still fails a server that slowed down by half for one round past its capacity', () => {
    const slowed = { ...SERVER, slowRound: 0, slowBy: 1.5 };
    for (const [rounds, n] of [
      [3, 100],
      [2, 40],
    ] as const) {
      expect(failRate(slowed, rounds, n, 2)).toBeGreaterThan(0.9);
      const c = spreadOf(slowed, rounds, n, 2, 1);
      expect(c).toMatchObject({ status: 'fail', code: 'server-speed-changed' });
    }
  });
});

describe('openLoopSpread', () => {
  it("judges each round against its own arrivals: an idle server's rounds all deliver what they were offered", () => {
    // 40 arrivals over 6.8 s and 9.5 s, each request 1 s: throughput 5,120 / 7.8 s and 5,120 / 10.5 s.
    const s = openLoopSpread([
      { outputTokens: 5120, requests: 40, windowMs: 7_800, arrivalSpanMs: 6_800 },
      { outputTokens: 5120, requests: 40, windowMs: 10_500, arrivalSpanMs: 9_500 },
    ]);
    expect(s.shares).toEqual([1, 1]);
    expect(s.shareCv).toBe(0);
    expect(s.offeredReqPerSec.map((r) => Number(r?.toFixed(2)))).toEqual([5.74, 4.11]);
  });

  it('past capacity the best round is what the server can do: a round at two thirds of it delivers 2/3', () => {
    const s = openLoopSpread([
      { outputTokens: 6000, requests: 40, windowMs: 6_000, arrivalSpanMs: 3_000 },
      { outputTokens: 6000, requests: 40, windowMs: 9_000, arrivalSpanMs: 2_500 },
    ]);
    expect(s.shares.map((x) => Number(x.toFixed(3)))).toEqual([1, 0.667]);
  });
});
