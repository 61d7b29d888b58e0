import { emptySummary } from '../../../src/core/metrics/percentiles.js';
import type { LevelResult, Summary } from '../../../src/shared/run-record.js';

/** A summary whose p50, p95 and p99 are `ms`, with an interval `spread` wide either side. */
export function latency(ms: number, spread = 0): Summary {
  return {
    ...emptySummary(),
    n: 300,
    p50: ms,
    p95: ms,
    p99: ms,
    p95Ci: [ms - spread, ms + spread],
    p99Ci: [ms - spread, ms + spread],
  };
}

/** A measured closed-loop level with the given latencies and throughput (everything else plausible and fixed). */
export function fakeLevel(concurrency: number, parts: Partial<LevelResult> = {}): LevelResult {
  return {
    serverConfigIndex: 0,
    concurrency,
    inputLen: 128,
    outputLen: 64,
    startMs: 0,
    endMs: 1,
    warmupRequests: 0,
    rounds: [],
    ttftMs: latency(50),
    tpotMs: latency(20),
    itlMs: latency(20),
    itlPerTokenMs: latency(20),
    e2eMs: latency(1000),
    tokensPerChunk: latency(1),
    outputTokPerSec: 100 * concurrency,
    totalTokPerSec: 300 * concurrency,
    reqPerSec: concurrency,
    roundCv: 0.01,
    completed: 300,
    failed: 0,
    outputTokensSource: 'server',
    errorsByReason: {},
    checks: [],
    ...parts,
  };
}
