import { describe, expect, it } from 'vitest';
import { lookConfidence, precisionAt, precisionFloor } from '../../../src/core/metrics/precision.js';
import { createRng } from '../../../src/core/rng.js';
import { normalQuantile, tQuantile } from '../../../src/core/metrics/student-t.js';
import { parsePrecision, precisionSaved, precisionText } from '../../../src/shared/precision.js';
import type { RequestRecord } from '../../../src/shared/request-record.js';
import { makeRecord } from './make-record.js';

// TTFTs drawn from an exponential distribution (a queue's shape), whose p95 is known exactly: -ln(0.05) x mean.
const MEAN_MS = 100;
const TRUE_P95 = -Math.log(0.05) * MEAN_MS;

function round(rng: () => number, index: number, n: number, firstId: number): RequestRecord[] {
  return Array.from({ length: n }, (_, i) => {
    const ttft = -Math.log(1 - rng()) * MEAN_MS;
    // Every round has the same window and tokens, so the rounds agree and only the interval decides.
    const sendMs = index * 10_000 + i;
    return makeRecord({
      id: firstId + i,
      round: index,
      sendMs,
      firstTokenMs: sendMs + ttft,
      endMs: sendMs + 5000,
      nOut: 10,
    });
  });
}

/** One level run with the sequential rule: rounds until the precision is reached or the plan runs out. */
function sequentialLevel(seed: number, planned: number, perRound: number, fraction: number, lookPlanned = planned) {
  const rng = createRng(seed);
  const { targets } = parsePrecision(`ttft_p95=${fraction * 100}%`) as { ok: true; targets: never[] };
  const records: RequestRecord[] = [];
  for (let r = 0; r < planned; r++) {
    records.push(...round(rng, r, perRound, r * perRound));
    const look = precisionAt(records, targets, r + 1, lookPlanned);
    if (look.reached || r === planned - 1) return look;
  }
  throw new Error('unreachable');
}

describe('--precision', () => {
  it("has the normal and Student's t quantiles of the tables", () => {
    expect(normalQuantile(0.975)).toBeCloseTo(1.959964, 5);
    expect(tQuantile(0.975, 10)).toBeCloseTo(2.228, 2);
    expect(tQuantile(0.995, 30)).toBeCloseTo(2.75, 2);
  });

  it('reads a bare share or one per figure, and refuses anything else in one line naming the fix', () => {
    expect(parsePrecision('5%')).toEqual({
      ok: true,
      targets: [
        { quantity: 'ttft', percentile: 95, fraction: 0.05 },
        { quantity: 'tpot', percentile: 95, fraction: 0.05 },
      ],
    });
    expect(parsePrecision('ttft_p95=5%,tpot_p99=3%')).toMatchObject({
      ok: true,
      targets: [{ fraction: 0.05 }, { percentile: 99, fraction: 0.03 }],
    });
    for (const bad of ['5', 'itl_p95=5%', 'ttft_p95=150%', 'ttft_p95=5%,ttft_p95=3%', '']) {
      const r = parsePrecision(bad);
      expect(r.ok, bad).toBe(false);
      if (!r.ok) expect(r.error).not.toContain('\n');
    }
  });

  it('splits the 95 % over the planned looks (Bonferroni) and never stops below the requests p99 needs', () => {
    expect(lookConfidence(5)).toBeCloseTo(0.99);
    expect(precisionFloor()).toBe(299);
    // At the looks' confidence p99 needs more: 459 with five planned looks, 477 with six.
    expect(precisionFloor(lookConfidence(5))).toBe(459);
    const early = sequentialLevel(1, 6, 100, 0.5);
    // Wide enough after three rounds, held to the fifth by the floor of six looks (477 requests).
    expect(early.rounds).toBe(5);
    expect(early.reached).toBe(true);
  });

  it('keeps its 95 % coverage of the true percentile however early it stops (400 seeded levels)', () => {
    const reps = 400;
    const tally = (lookPlanned: (planned: number) => number) => {
      let covered = 0;
      let rounds = 0;
      for (let seed = 1; seed <= reps; seed++) {
        const look = sequentialLevel(seed, 8, 100, 0.15, lookPlanned(8));
        const ci = look.figures[0]!.ci!;
        if (ci[0] <= TRUE_P95 && TRUE_P95 <= ci[1]) covered++;
        rounds += look.rounds;
      }
      return { coverage: covered / reps, meanRounds: rounds / reps };
    };
    const bonferroni = tally((planned) => planned);
    expect(bonferroni.coverage).toBeGreaterThanOrEqual(0.95);
    // It stops early on average: fewer rounds than the plan's 8.
    expect(bonferroni.meanRounds).toBeLessThan(8);
    // The same looks each at a plain 95 % cover less: the spending is what keeps the coverage.
    const naive = tally(() => 1);
    expect(naive.coverage).toBeLessThan(bonferroni.coverage);
  });

  it('says what it saved, or that it did not reach the precision with the width it reached', () => {
    const done = { completed: 100, failed: 0, windowMs: 4000 };
    const figure = { figure: 'ttft_p95', target: 0.05, halfWidth: 0.031, reached: true };
    const level = {
      rounds: [done, done],
      precision: { rounds: 2, plannedRounds: 5, figures: [figure], roundCv: 0.02, reached: true },
    };
    expect(precisionSaved(level)).toEqual({ requests: 300, ms: 12_000 });
    expect(precisionText(level)).toContain('precision reached after 2 of 5 rounds: ttft_p95 ±3.1 % (asked 5.0 %)');
    const wide = {
      ...level,
      precision: {
        ...level.precision,
        rounds: 5,
        reached: false,
        figures: [{ ...figure, halfWidth: 0.072, reached: false }],
      },
    };
    expect(precisionText(wide)).toContain('did not reach the precision in 5 rounds: ttft_p95 ±7.2 % (asked 5.0 %)');
    expect(precisionSaved(wide)).toEqual({ requests: 0, ms: 0 });
  });
});
