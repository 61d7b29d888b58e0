import { describe, expect, it } from 'vitest';
import {
  coefficientOfVariation,
  countEstimatedInput,
  roundCv,
  roundResult,
  roundResults,
} from '../../../src/core/metrics/throughput.js';
import { failed, makeRecord } from './make-record.js';

describe('roundResult', () => {
  it('uses the window from first send to last end, failed requests included', () => {
    const records = [
      makeRecord({ round: 0, sendMs: 1000, endMs: 1800, nOut: 100, nIn: 50 }),
      makeRecord({ round: 0, sendMs: 1200, endMs: 2000, nOut: 100, nIn: 50 }),
      // The failure ends last: it bounds the window (window 1000..3000 = 2 s).
      failed(1500, 3000, 'timeout'),
    ];
    const r = roundResult(records, 0)!;
    expect(r.startMs).toBe(1000);
    expect(r.endMs).toBe(3000);
    expect(r.windowMs).toBe(2000);
    expect(r.outputTokPerSec).toBe(100); // 200 tokens / 2 s
    expect(r.totalTokPerSec).toBe(150); // (200 + 100) / 2 s
    expect(r.reqPerSec).toBe(1); // 2 completed / 2 s
    expect(r.completed).toBe(2);
    expect(r.failed).toBe(1);
  });

  it('lets a user-cancelled request bound the window without counting it as failed', () => {
    const records = [makeRecord({ round: 0, sendMs: 0, endMs: 1000, nOut: 100 }), failed(500, 2000, 'cancelled')];
    const r = roundResult(records, 0)!;
    expect(r.windowMs).toBe(2000);
    expect(r.failed).toBe(0);
    expect(roundResult([...records, failed(0, 10, 'server-died')], 0)!.failed).toBe(1);
  });

  it('counts expectedIn where the server gave no prompt_tokens, and says how many', () => {
    const records = [
      makeRecord({ round: 0, sendMs: 0, endMs: 500, nOut: 10, nIn: null, expectedIn: 90 }),
      makeRecord({ round: 0, sendMs: 0, endMs: 1000, nOut: 10, nIn: 100 }),
    ];
    const r = roundResult(records, 0)!;
    expect(r.totalTokPerSec).toBe(210); // (10 + 90 + 10 + 100) / 1 s
    expect(countEstimatedInput(records)).toBe(1);
  });

  it('bounds a failed request without an end by its last chunk or send time', () => {
    const records = [
      makeRecord({ round: 0, sendMs: 0, endMs: 400, nOut: 4 }),
      failed(100, null, 'connection', { chunks: [[900, 1]] }),
    ];
    expect(roundResult(records, 0)!.windowMs).toBe(900);
  });

  it('excludes warm-up and returns null for an empty round', () => {
    const records = [makeRecord({ round: -1, warmup: true, sendMs: 0, endMs: 10, nOut: 4 })];
    expect(roundResult(records, 0)).toBeNull();
    expect(roundResults(records)).toEqual([]);
  });
});

describe('roundResults and round spread', () => {
  it('splits by round in order', () => {
    const records = [
      makeRecord({ round: 1, sendMs: 2000, endMs: 3000, nOut: 300 }),
      makeRecord({ round: 0, sendMs: 0, endMs: 1000, nOut: 100 }),
    ];
    const rounds = roundResults(records);
    expect(rounds.map((r) => r.round)).toEqual([0, 1]);
    expect(rounds.map((r) => r.outputTokPerSec)).toEqual([100, 300]);
    // mean 200, sample std sqrt(((-100)^2 + 100^2) / 1) = 141.42 -> CV 0.7071
    expect(roundCv(rounds)).toBeCloseTo(Math.SQRT1_2, 12);
    expect(rounds.some((r) => r.partial !== undefined)).toBe(false);
  });

  it('flags rounds numbered completedRounds or later as partial', () => {
    const records = [
      makeRecord({ round: 0, sendMs: 0, endMs: 1000, nOut: 100 }),
      makeRecord({ round: 1, sendMs: 2000, endMs: 3000, nOut: 100 }),
      makeRecord({ round: 2, sendMs: 4000, endMs: 4100, nOut: 1 }),
    ];
    expect(roundResults(records, 2).map((r) => r.partial ?? false)).toEqual([false, false, true]);
    expect(roundResults(records, 0).map((r) => r.partial ?? false)).toEqual([true, true, true]);
    expect(roundResults(records, 3).map((r) => r.partial ?? false)).toEqual([false, false, false]);
  });

  it('computes CV = sample std / mean and null below 2 rounds', () => {
    // [90, 100, 110]: mean 100, std sqrt((100 + 0 + 100) / 2) = 10 -> 0.1
    expect(coefficientOfVariation([90, 100, 110])).toBeCloseTo(0.1, 12);
    expect(coefficientOfVariation([100])).toBeNull();
    expect(coefficientOfVariation([])).toBeNull();
    expect(coefficientOfVariation([0, 0])).toBeNull();
  });
});
