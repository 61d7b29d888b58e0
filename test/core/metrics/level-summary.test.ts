import { describe, expect, it } from 'vitest';
import { summarizeLevel, type LevelSummaryInput } from '../../../src/core/metrics/level-summary.js';
import { levelTelemetry } from '../../fakes/level-telemetry.js';
import { failed, streamed } from './make-record.js';

// Round r (0, 1): two requests sent at base, base+100 with TTFT 100/200 ms, 4 tokens 10 ms apart.
// Round 0 base 1000 -> window 1000..1330 (second request ends 1100+200+30); round 1 base 2000.
function levelRecords() {
  const records = [];
  for (const round of [0, 1]) {
    const base = 1000 + round * 1000;
    records.push(streamed({ sendMs: base, ttftMs: 100, chunks: 4, gapMs: 10 }, { round, nIn: 8 }));
    records.push(streamed({ sendMs: base + 100, ttftMs: 200, chunks: 4, gapMs: 10 }, { round, nIn: 8 }));
  }
  // Warm-up before round 0: spans the level from 500 but counts nowhere else.
  records.push(streamed({ sendMs: 500, ttftMs: 400, chunks: 4 }, { round: -1, warmup: true }));
  return records;
}

const base: LevelSummaryInput = {
  records: [],
  concurrency: 2,
  inputLen: 8,
  outputLen: 4,
  rounds: 2,
  warmupRequests: 1,
  serverConfigIndex: 0,
  uniquePrefix: true,
  loopLagP99Ms: 2,
};

describe('summarizeLevel', () => {
  it('summarizes a level by hand', () => {
    const level = summarizeLevel({
      ...base,
      records: levelRecords(),
      gpuPricePerHour: 2,
      utilization: 0.5,
      slo: { ttftMs: 150 },
      telemetry: { summary: levelTelemetry() },
    });
    expect(level.startMs).toBe(500);
    expect(level.endMs).toBe(2330);
    expect(level.completed).toBe(4);
    expect(level.failed).toBe(0);
    expect(level.ttftMs.n).toBe(4);
    expect(level.ttftMs.mean).toBe(150);
    expect(level.ttftMs.p50).toBe(150);
    expect(level.ttftMs.max).toBe(200); // the 400 ms warm-up TTFT is excluded
    expect(level.tpotMs.mean).toBe(10); // 30 ms / 3 for every request
    expect(level.itlMs.n).toBe(12);
    expect(level.itlPerTokenMs.mean).toBe(10);
    expect(level.e2eMs.p50).toBe(180); // [130, 130, 230, 230]
    expect(level.tokensPerChunk.mean).toBe(1);
    expect(level.scheduleLagMs).toBeUndefined();
    // Each round: 8 tokens over 330 ms -> 24.2424 tok/s; total (8 + 16) / 0.33 s; 2 req / 0.33 s
    expect(level.rounds).toHaveLength(2);
    expect(level.rounds[0]!.windowMs).toBe(330);
    expect(level.outputTokPerSec).toBeCloseTo(8 / 0.33, 9);
    expect(level.totalTokPerSec).toBeCloseTo(24 / 0.33, 9);
    expect(level.reqPerSec).toBeCloseTo(2 / 0.33, 9);
    expect(level.roundCv).toBe(0);
    // $2/h at 24.24 tok/s: 2 / (24.24 * 3600) * 1e6 = 22.9166...; at 50 % utilization twice that
    expect(level.costPerMOutputTokUsd).toBeCloseTo((2 / ((8 / 0.33) * 3600)) * 1e6, 9);
    expect(level.costPerMOutputTokAtUtilizationUsd).toBeCloseTo((4 / ((8 / 0.33) * 3600)) * 1e6, 9);
    expect(level.goodput).toBe(0.5); // TTFT 100 meets 150, TTFT 200 does not
    expect(level.outputTokensSource).toBe('server');
    expect(level.errorsByReason).toEqual({});
    expect(level.malformedLines).toBe(0);
    expect(level.cancelled).toBeUndefined();
    expect(level.rounds.map((r) => r.partial)).toEqual([undefined, undefined]);
    expect(level.telemetry).toBeUndefined();
    expect(level.checks.map((c) => c.id)).toEqual([
      'output-length',
      'input-length',
      'streaming',
      'warmup',
      'round-spread',
      'sample-size',
      'errors',
      'prefix-cache',
      'client',
      'token-agreement',
      'throttling',
    ]);
    const status = Object.fromEntries(level.checks.map((c) => [c.id, c.status]));
    expect(status).toMatchObject({
      'output-length': 'pass',
      'input-length': 'pass',
      streaming: 'pass',
      warmup: 'pass',
      'round-spread': 'pass',
      'sample-size': 'warn',
      errors: 'pass',
      'prefix-cache': 'pass',
      // Asked c=2, the records hold one request for 100 ms and two for 30 ms a round: 1.23 in flight, not 2.
      client: 'fail',
      'token-agreement': 'pass',
      throttling: 'pass',
    });
    const client = level.checks.find((c) => c.id === 'client')!;
    expect(client.code).toBe('offered-below-asked');
    expect(client.facts?.achievedConcurrency).toBeCloseTo(160 / 130, 9);
    expect(client.facts?.askedConcurrency).toBe(2);
    expect(level.offered).toEqual({ inFlightMean: 160 / 130, inFlightP5: 1, windowMs: 260, shortfallAfterFailures: 0 });
  });

  it('counts failures by kind, leaves optional fields out, and summarizes schedule lag in rate mode', () => {
    const records = [
      streamed({ sendMs: 12, ttftMs: 100, chunks: 4 }, { scheduledMs: 10 }),
      streamed({ sendMs: 24, ttftMs: 100, chunks: 4 }, { scheduledMs: 20, nOutSource: 'estimated' }),
      failed(30, 40, 'http-500', { scheduledMs: 30 }),
    ];
    const level = summarizeLevel({ ...base, records, rate: 4 });
    expect(level.rate).toBe(4);
    expect(level.failed).toBe(1);
    expect(level.completed).toBe(2);
    expect(level.errorsByReason).toEqual({ 'http-500': 1 });
    expect(level.scheduleLagMs?.n).toBe(3); // lags 2, 4, 0
    expect(level.scheduleLagMs?.max).toBe(4);
    expect(level.outputTokensSource).toBe('mixed');
    expect(level.costPerMOutputTokUsd).toBeUndefined();
    expect(level.goodput).toBeUndefined();
    expect(level.roundCv).toBeNull();
    expect(level.checks.find((c) => c.id === 'errors')!.status).toBe('fail');
    expect(level.checks.find((c) => c.id === 'round-spread')!.status).toBe('warn');
  });

  it('leaves a partial round out of the throughput means and the spread, keeping it flagged and its latencies', () => {
    // Rounds 0 and 1 complete (24.24 tok/s each); round 2 was cut short by a cancel: one fast request that got
    // its 4 tokens out in 130 ms (30.77 tok/s) and one cancelled mid-stream.
    const records = [
      ...levelRecords(),
      streamed({ sendMs: 3000, ttftMs: 100, chunks: 4, gapMs: 10 }, { round: 2, nIn: 8 }),
      failed(3010, 3050, 'cancelled', { round: 2 }),
    ];
    const level = summarizeLevel({ ...base, records, rounds: 2 });
    expect(level.rounds.map((r) => r.partial ?? false)).toEqual([false, false, true]);
    expect(level.rounds[2]!.outputTokPerSec).toBeCloseTo(4 / 0.13, 9);
    expect(level.outputTokPerSec).toBeCloseTo(8 / 0.33, 9);
    expect(level.totalTokPerSec).toBeCloseTo(24 / 0.33, 9);
    expect(level.reqPerSec).toBeCloseTo(2 / 0.33, 9);
    expect(level.roundCv).toBe(0);
    const spread = level.checks.find((c) => c.id === 'round-spread')!;
    expect(spread).toMatchObject({ status: 'pass', code: 'steady', facts: { rounds: 2, partialRounds: 1 } });
    // Latency keeps every ok measured request, the partial round's included.
    expect(level.ttftMs.n).toBe(5);
    expect(level.completed).toBe(5);
    // The cancelled request is no failure.
    expect(level.failed).toBe(0);
    expect(level.cancelled).toBe(1);
    expect(level.errorsByReason).toEqual({});
    expect(level.checks.find((c) => c.id === 'errors')!.status).toBe('pass');
  });

  it('gives no throughput from a partial round when no round completed, and the round-spread check warns', () => {
    const records = [
      streamed({ sendMs: 0, ttftMs: 100, chunks: 4, gapMs: 10 }, { round: 0 }),
      failed(10, 200, 'server-died', { round: 0 }),
    ];
    const level = summarizeLevel({ ...base, records, rounds: 0 });
    expect(level.rounds).toHaveLength(1);
    expect(level.rounds[0]!.partial).toBe(true);
    // 4 tokens over 0..200 ms would read 20 tok/s: the crash, not the server's speed, ended that window.
    expect(level.outputTokPerSec).toBeNull();
    expect(level.roundCv).toBeNull();
    const spread = level.checks.find((c) => c.id === 'round-spread')!;
    expect(spread).toMatchObject({ status: 'warn', code: 'no-complete-round' });
    // A dying server is a failure.
    expect(level.failed).toBe(1);
    expect(level.errorsByReason).toEqual({ 'server-died': 1 });
    expect(level.cancelled).toBeUndefined();
  });

  it('sums malformed SSE lines of measured requests and warns in token-agreement', () => {
    const records = levelRecords().map((r, i) => ({ ...r, malformedLines: r.warmup ? 7 : i }));
    const level = summarizeLevel({ ...base, records });
    expect(level.malformedLines).toBe(0 + 1 + 2 + 3); // the warm-up's 7 are not measured
    const c = level.checks.find((x) => x.id === 'token-agreement')!;
    expect(c).toMatchObject({ status: 'warn', code: 'stream-problems', facts: { malformedLines: 6 } });
  });

  it('warns in the warmup check when every warm-up request failed', () => {
    const records = [
      ...levelRecords().filter((r) => !r.warmup),
      failed(500, 600, 'http-503', { round: -1, warmup: true }),
    ];
    const level = summarizeLevel({ ...base, records });
    expect(level.warmupRequests).toBe(1);
    const c = level.checks.find((x) => x.id === 'warmup')!;
    expect(c).toMatchObject({ status: 'warn', code: 'warmup-failed', facts: { warmupRequests: 1, succeeded: 0 } });
  });

  it('gives an empty but well-formed level for no records', () => {
    const level = summarizeLevel({ ...base, records: [] });
    expect(level.ttftMs.n).toBe(0);
    expect(level.rounds).toEqual([]);
    expect(level.outputTokPerSec).toBe(0);
    expect(level.outputTokensSource).toBe('estimated');
  });
});
