import { describe, expect, it } from 'vitest';
import { LevelAccumulator, condensed } from '../../../src/core/metrics/level-accumulator.js';
import { summarizeLevel } from '../../../src/core/metrics/level-summary.js';
import { summarize } from '../../../src/core/metrics/percentiles.js';
import { poolLatencies, requestMetrics } from '../../../src/core/metrics/request-metrics.js';
import { CountColumn, SKETCH_RELATIVE_ERROR, SampleColumn } from '../../../src/core/metrics/sample-column.js';
import { createRng } from '../../../src/core/rng.js';
import type { RequestRecord } from '../../../src/shared/request-record.js';
import { failed, streamed } from './make-record.js';

/** A level of `n` measured requests with varied TTFT, gaps and chunk sizes, and a few failures. */
function level(n: number, seed = 7): RequestRecord[] {
  const rng = createRng(seed);
  return Array.from({ length: n }, (_, id) =>
    id % 37 === 5
      ? failed(id * 3, id * 3 + 40, 'http-500', { id })
      : streamed(
          {
            sendMs: id * 3,
            ttftMs: 20 + rng() * 200,
            gapMs: 5 + rng() * 20,
            chunks: 2 + Math.floor(rng() * 12),
            tokensPerChunk: 1 + Math.floor(rng() * 2),
          },
          { id, round: id % 3 },
        ),
  );
}

const base = {
  concurrency: 4,
  inputLen: 8,
  outputLen: 4,
  rounds: 3,
  warmupRequests: 0,
  serverConfigIndex: 0,
  uniquePrefix: true,
};

describe('LevelAccumulator', () => {
  it('pools each latency exactly as poolLatencies does over the whole level', () => {
    const records = level(500);
    const acc = LevelAccumulator.of(records);
    const pooled = poolLatencies(records);
    for (const key of ['ttftMs', 'e2eMs', 'tpotMs', 'itlMs', 'itlPerTokenMs', 'tokensPerChunk'] as const)
      expect(acc.pooled[key].summary(), key).toEqual(summarize(pooled[key]));
    expect(acc.streamSample).toBeNull();
    expect(acc.measured).toEqual(records);
  });

  it('keeps no whole record past its bound, and a level summarised so equals the one from every whole record', () => {
    const records = level(3000);
    const whole = summarizeLevel({ ...base, records });
    const acc = new LevelAccumulator(3, { streamRecords: 400 });
    for (const r of records) acc.add(r);
    expect(acc.measured).toHaveLength(3000);
    expect(acc.measured.every((r) => r.chunks.length <= 2)).toBe(true);
    expect(acc.streamSample).toEqual({ kept: 401, of: 3000 });
    const sample = acc.streamRecords;
    expect(sample).toHaveLength(401);
    // The sample holds whole records, in id order.
    expect(sample.every((r) => r === records[r.id])).toBe(true);
    expect(sample.map((r) => r.id)).toEqual([...sample.map((r) => r.id)].sort((a, b) => a - b));
    const bounded = summarizeLevel({ ...base, records: [...acc.warmup, ...acc.measured], accumulated: acc });
    for (const key of ['ttftMs', 'tpotMs', 'itlMs', 'itlPerTokenMs', 'e2eMs', 'tokensPerChunk', 'rounds'] as const)
      expect(bounded[key], key).toEqual(whole[key]);
    expect([bounded.completed, bounded.failed, bounded.errorsByReason]).toEqual([
      whole.completed,
      whole.failed,
      whole.errorsByReason,
    ]);
    expect(bounded.checks.find((c) => c.id === 'errors')).toEqual(whole.checks.find((c) => c.id === 'errors'));
  });

  it('condenses a record to its first and last chunk with its token total, TTFT, TPOT and end unchanged', () => {
    const r = streamed({ chunks: 9, tokensPerChunk: 2, gapMs: 7 });
    const c = condensed(r);
    expect(c.chunks).toEqual([r.chunks[0], [r.chunks[8]![0], 16]]);
    const [a, b] = [requestMetrics(r), requestMetrics(c)];
    expect([b.ttftMs, b.tpotMs, b.e2eMs]).toEqual([a.ttftMs, a.tpotMs, a.e2eMs]);
    expect(r.chunks).toHaveLength(9);
  });
});

describe('SampleColumn', () => {
  it('summarises exactly as summarize while it holds its values', () => {
    const rng = createRng(1);
    const values = Array.from({ length: 70_000 }, () => rng() * 100);
    const column = new SampleColumn();
    for (const v of values) column.add(v);
    expect(column.sketched).toBe(false);
    expect(column.summary()).toEqual(summarize(values));
  });

  it('past its bound reads every percentile and interval within the stated error of the exact one', () => {
    const rng = createRng(2);
    // Long-tailed, with zero gaps among them (events read together).
    const values = Array.from({ length: 50_000 }, (_, i) => (i % 10 === 0 ? 0 : -Math.log(1 - rng()) * 12));
    const column = new SampleColumn(10_000);
    for (const v of values) column.add(v);
    expect(column.sketched).toBe(true);
    const exact = summarize(values);
    const got = column.summary();
    expect([got.n, got.min, got.max]).toEqual([exact.n, exact.min, exact.max]);
    expect(got.mean).toBeCloseTo(exact.mean!, 9);
    expect(got.std).toBeCloseTo(exact.std!, 9);
    for (const key of ['p50', 'p90', 'p95', 'p99'] as const) {
      expect(Math.abs(got[key]! - exact[key]!), key).toBeLessThanOrEqual(exact[key]! * SKETCH_RELATIVE_ERROR + 1e-12);
    }
    for (const key of ['p95Ci', 'p99Ci'] as const)
      got[key]!.forEach((v, i) =>
        expect(Math.abs(v - exact[key]![i]!)).toBeLessThanOrEqual(exact[key]![i]! * SKETCH_RELATIVE_ERROR + 1e-12),
      );
  });
});

describe('CountColumn', () => {
  it('summarises whole counts exactly as summarize, from their distinct values only', () => {
    const rng = createRng(3);
    const values = Array.from({ length: 40_000 }, () => 1 + Math.floor(rng() * rng() * 9));
    const column = new CountColumn();
    for (const v of values) column.add(v);
    expect(column.summary()).toEqual(summarize(values));
    expect(new CountColumn().summary()).toEqual(summarize([]));
  });

  it('gives the same bits as summarize when its values are not whole (its passes add in rank order)', () => {
    const rng = createRng(5);
    const values = Array.from({ length: 20_000 }, () => Math.floor(rng() * 40) * 0.1);
    const column = new CountColumn();
    for (const v of values) column.add(v);
    expect(column.summary()).toEqual(summarize(values));
  });
});
