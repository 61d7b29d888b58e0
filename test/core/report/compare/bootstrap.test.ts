import { describe, expect, it } from 'vitest';
import { compareSeries } from '../../../../src/core/report/compare/compare.js';
import { percentile } from '../../../../src/core/metrics/percentiles.js';
import {
  bootstrapDifference,
  resampleBlocks,
  selectPercentile,
} from '../../../../src/core/report/compare/statistics.js';
import { createRng } from '../../../../src/core/rng.js';
import { syntheticBlocks, syntheticSeries } from './helpers.js';

describe('the block bootstrap of a difference', () => {
  it('selects percentiles in linear time with the same values as the sorted rule (NumPy linear)', () => {
    const rng = createRng(9);
    for (const n of [1, 2, 3, 7, 20, 101, 1000]) {
      // Rounded values: many ties, as latencies in whole milliseconds have.
      const values = Array.from({ length: n }, () => Math.round(rng() * 50));
      const sorted = [...values].sort((x, y) => x - y);
      const buf = Float64Array.from(values);
      for (const p of [0, 50, 95, 99, 100])
        expect(selectPercentile(buf, n, p), `${n} p${p}`).toBe(percentile(sorted, p));
    }
    expect(selectPercentile(new Float64Array(4), 0, 50)).toBeNull();
  });

  it('draws whole rounds, then requests from within the drawn round only', () => {
    const blocks = syntheticBlocks(1, 5, 30).map((b, i) => ({
      ...b,
      requests: b.requests.map((r) => ({ ...r, outTokens: i })), // tag each request with its round
    }));
    const rng = createRng(3);
    for (let k = 0; k < 50; k++) {
      const drawn = resampleBlocks(blocks, rng);
      expect(drawn).toHaveLength(5);
      for (const b of drawn) {
        expect(b.requests).toHaveLength(30);
        expect(new Set(b.requests.map((r) => r.outTokens)).size).toBe(1);
        const from = blocks[b.requests[0]!.outTokens]!;
        expect(b.windowMs).toBe(from.windowMs);
      }
    }
  });

  it('is reproducible: the same data and seed give the same intervals, another seed others', () => {
    const a = syntheticBlocks(11, 3, 40);
    const b = syntheticBlocks(12, 3, 40);
    const one = bootstrapDifference(a, b, { replicates: 300, seed: 5 });
    expect(bootstrapDifference(a, b, { replicates: 300, seed: 5 })).toEqual(one);
    expect(bootstrapDifference(a, b, { replicates: 300, seed: 6 })).not.toEqual(one);
  });

  it('finds no difference between two samples of one distribution in most seeds', () => {
    let same = 0;
    let total = 0;
    for (let seed = 1; seed <= 12; seed++) {
      const c = compareSeries(
        [
          syntheticSeries('a', syntheticBlocks(seed * 2, 4, 40)),
          syntheticSeries('b', syntheticBlocks(seed * 2 + 1, 4, 40)),
        ],
        { replicates: 400, seed },
      );
      for (const f of c.levels[0]!.figures) {
        total++;
        if (f.verdict === 'no difference the data can show') same++;
        expect(f.interval, f.key).toBeDefined();
      }
    }
    // 95 % intervals: about 1 in 20 excludes 0 by chance; fixed seeds make this count the same on every machine.
    expect(same / total).toBeGreaterThanOrEqual(0.85);
  });

  it('calls a 2x slowdown slower on every figure, and the ratio interval holds about 2', () => {
    const c = compareSeries(
      [syntheticSeries('base', syntheticBlocks(21, 4, 40)), syntheticSeries('slow', syntheticBlocks(22, 4, 40, 2))],
      { replicates: 400 },
    );
    const figures = c.levels[0]!.figures;
    expect(figures.map((f) => [f.key, f.verdict])).toEqual(figures.map((f) => [f.key, 'slower']));
    const ttft = figures.find((f) => f.key === 'ttftP50')!;
    expect(ttft.interval!.ratio![0]).toBeLessThan(2.3);
    expect(ttft.interval!.ratio![1]).toBeGreaterThan(1.7);
    const thr = figures.find((f) => f.key === 'throughput')!;
    expect(thr.ratio).toBeGreaterThan(0.4);
    expect(thr.ratio).toBeLessThan(0.6);
  });

  it('calls the faster side faster when the baseline is the slow one', () => {
    const c = compareSeries(
      [syntheticSeries('slow', syntheticBlocks(31, 4, 40, 2)), syntheticSeries('base', syntheticBlocks(32, 4, 40))],
      { replicates: 400 },
    );
    expect(new Set(c.levels[0]!.figures.map((f) => f.verdict))).toEqual(new Set(['faster']));
  });
});
