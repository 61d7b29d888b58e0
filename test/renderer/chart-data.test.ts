import { describe, expect, it } from 'vitest';
import {
  alignPoints,
  paretoChart,
  percentileChart,
  pixelPoints,
  sweepXLabel,
  throughputChart,
} from '../../src/renderer/lib/chart-data.js';
import type { LevelResult, RunRecord, Summary } from '../../src/shared/run-record.js';

const summary = (p50: number, p95: number): Summary => ({
  n: 10,
  mean: p50,
  std: 1,
  min: p50,
  max: p95,
  p50,
  p90: p95,
  p95,
  p99: p95,
  p95Ci: null,
  p99Ci: null,
});
const level = (concurrency: number, tok: number, extra: Partial<LevelResult> = {}): LevelResult =>
  ({
    serverConfigIndex: 0,
    concurrency,
    inputLen: 32,
    outputLen: 16,
    outputTokPerSec: tok,
    ttftMs: summary(concurrency * 10, concurrency * 20),
    tpotMs: summary(5, 6),
    tokensPerChunk: summary(1, 1),
    ...extra,
  }) as LevelResult;
const record = (levels: LevelResult[]): RunRecord => ({ levels }) as RunRecord;

describe('chart data (plain, shared with the HTML report)', () => {
  it('aligns series with different x onto one ascending axis', () => {
    expect(
      alignPoints([
        [
          [2, 20],
          [1, 10],
        ],
        [
          [3, 30],
          [1, 11],
        ],
      ]),
    ).toEqual({
      x: [1, 2, 3],
      ys: [
        [10, 20, null],
        [11, null, 30],
      ],
    });
  });

  it('plots throughput and p50/p95 against concurrency', () => {
    const r = record([level(1, 100), level(4, 350)]);
    expect(throughputChart(r)).toMatchObject({ x: [1, 4], ys: [[100, 350]], series: [{ label: 'output tok/s' }] });
    const ttft = percentileChart(r, 'ttft');
    expect(ttft.ys).toEqual([
      [10, 40],
      [20, 80],
    ]);
    expect(ttft.series.map((s) => s.label)).toEqual(['TTFT p50', 'TTFT p95']);
  });

  it('plots a trace burst at its size, on an axis that says "burst size", never at concurrency 0', () => {
    // A trace whose arrivals span 0 ms: no rate, and concurrency is only the (absent) in-flight cap.
    const r = record([level(0, 900, { burst: 64 })]);
    expect(sweepXLabel(r)).toBe('burst size (requests at once)');
    expect(throughputChart(r)).toMatchObject({ x: [64], ys: [[900]] });
    expect(percentileChart(r, 'ttft').x).toEqual([64]);
  });

  it('plots a trace level with a rate as an open-loop rate level', () => {
    const r = record([level(0, 500, { rate: 12.5 })]);
    expect(sweepXLabel(r)).toBe('request rate (req/s)');
    expect(throughputChart(r).x).toEqual([12.5]);
    expect(sweepXLabel(record([level(1, 100), level(4, 350)]))).toBe('concurrency (requests in flight)');
  });

  it('never joins a burst and a concurrency level in one line: each kind is its own series, the axis names both', () => {
    const r = record([level(2, 100), level(4, 180), level(0, 300, { burst: 8 })]);
    expect(sweepXLabel(r)).toBe('burst size (requests at once) / concurrency (requests in flight)');
    const t = throughputChart(r);
    expect(t.series.map((s) => s.label)).toEqual([
      'output tok/s (in 32/out 16 concurrency)',
      'output tok/s (in 32/out 16 burst)',
    ]);
    expect(t.x).toEqual([2, 4, 8]);
    expect(t.ys).toEqual([
      [100, 180, null],
      [null, null, 300],
    ]);
  });

  it('draws one series per setup when input/output lengths vary', () => {
    const r = record([
      level(1, 100),
      level(2, 180),
      level(1, 60, { inputLen: 1024 }),
      level(2, 110, { inputLen: 1024 }),
    ]);
    expect(throughputChart(r).series.map((s) => s.label)).toEqual([
      'output tok/s (in 32/out 16)',
      'output tok/s (in 1024/out 16)',
    ]);
  });
});

describe('Pareto view with SLOs', () => {
  // TPOT p95 6 ms at every level (summary() above); TTFT p95 = 20 x concurrency.
  const withCi = (l: LevelResult): LevelResult => ({
    ...l,
    completed: 10,
    failed: 0,
    rounds: [],
    tpotMs: { ...l.tpotMs, p95Ci: [5.9, 6.1] },
    ttftMs: { ...l.ttftMs, p95Ci: [l.ttftMs.p95! - 1, l.ttftMs.p95! + 1] },
  });
  const levels = [level(1, 100), level(4, 300), level(8, 450)].map(withCi);

  it('plots per-user tok/s (1000 / TPOT p50) against total tok/s, with no marks when the run has no SLO', () => {
    const view = paretoChart({ ...record(levels), config: {} } as RunRecord);
    expect(view.data.x).toEqual([100, 300, 450]);
    expect(view.data.ys).toEqual([[200, 200, 200]]);
    expect(view.data.series.map((s) => s.label)).toEqual(['per-user tok/s']);
    expect(view).toMatchObject({ floor: null, capacity: null, note: null });
  });

  it('has no per-user speed for a level whose whole output came in one chunk (a diffusion block), and says why', () => {
    const block = levels.map((l, i) => (i === 2 ? { ...l, tokensPerChunk: summary(l.outputLen, l.outputLen) } : l));
    const view = paretoChart({ ...record(block), config: {} } as RunRecord);
    expect(view.data.x).toEqual([100, 300]);
    expect(view.note).toMatch(/^Not shown: 1 level whose whole output came in one chunk/);
  });

  it('marks levels that meet every --slo target and those that miss one; a TPOT target shades its floor', () => {
    const r = { ...record(levels), config: { slo: { targets: 'ttft_p95=100,tpot_p95=10' } } } as RunRecord;
    const view = paretoChart(r);
    // TTFT p95: 20, 80, 160 ms: c=8 misses.
    expect(view.data.series.map((s) => [s.label, !!s.hollow])).toEqual([
      ['per-user tok/s', false],
      ['meets every SLO', false],
      ['misses an SLO', true],
    ]);
    expect(view.data.ys[1]).toEqual([200, 200, null]);
    expect(view.data.ys[2]).toEqual([null, null, 200]);
    expect(view.floor).toEqual({ y: 100, label: 'TPOT SLO 10 ms' });
    expect(view.capacity).toBeNull();
    expect(view.note).toMatch(/^Marks: each level against ttft_p95≤100 ms, tpot_p95≤10 ms/);
  });

  it("takes the capacity search's verdicts and labels its capacity", () => {
    const r = {
      ...record(levels),
      config: {},
      capacity: {
        mode: 'concurrency',
        targets: [{ metric: 'ttft', percentile: 95, limitMs: 100 }],
        capacity: 4,
        probes: [
          { load: 1, levelIndex: 0, verdict: 'meets' },
          { load: 4, levelIndex: 1, verdict: 'meets' },
          { load: 8, levelIndex: 2, verdict: 'uncertain' },
        ],
      },
    } as unknown as RunRecord;
    const view = paretoChart(r);
    expect(view.data.series.map((s) => s.label)).toEqual(['per-user tok/s', 'meets every SLO', 'uncertain']);
    expect(view.capacity).toEqual({ x: 300, y: 200, label: 'c=4 capacity' });
    expect(view.floor).toBeNull();
  });
});

describe('pixelPoints (a dense scatter thinned to one point per pixel)', () => {
  // A deterministic stream: the same points every run.
  let s = 7;
  const rnd = (): number => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
  const n = 20_000;
  const xs = Array.from({ length: n }, (_, i) => i / 10);
  const ys = xs.map((_, i) => (i % 97 === 0 ? null : 100 + 50 * rnd() + (rnd() < 0.001 ? 5000 : 0)));
  const toPx = (x: number): number => (x / 2000) * 400; // 400 px wide: 50 points per column
  const toPy = (y: number): number => 200 - y / 30;

  it('keeps every pixel column’s lowest and highest value exactly, and every occupied pixel', () => {
    const kept = pixelPoints(xs, ys, 0, n - 1, toPx, toPy);
    expect(kept.length).toBeLessThan(n / 2);
    const byColumn = (idxs: number[]) => {
      const m = new Map<number, { lo: number; hi: number; cells: Set<number> }>();
      for (const i of idxs) {
        const y = ys[i];
        if (y === null || y === undefined) continue;
        const px = Math.round(toPx(xs[i]!));
        const c = m.get(px) ?? { lo: Infinity, hi: -Infinity, cells: new Set<number>() };
        c.lo = Math.min(c.lo, y);
        c.hi = Math.max(c.hi, y);
        c.cells.add(Math.round(toPy(y)));
        m.set(px, c);
      }
      return m;
    };
    const all = byColumn(xs.map((_, i) => i));
    const thin = byColumn(kept);
    expect([...thin.keys()].sort((a, b) => a - b)).toEqual([...all.keys()].sort((a, b) => a - b));
    for (const [px, c] of all) {
      expect(thin.get(px)!.lo, `column ${px}`).toBe(c.lo);
      expect(thin.get(px)!.hi, `column ${px}`).toBe(c.hi);
      expect(thin.get(px)!.cells).toEqual(c.cells);
    }
    expect(kept.every((i) => ys[i] !== null)).toBe(true);
  });

  it('looks only at the visible range, and keeps its highest point', () => {
    const kept = pixelPoints(xs, ys, 1000, 1999, toPx, toPy);
    expect(kept.every((i) => i >= 1000 && i <= 1999)).toBe(true);
    let top = 1000;
    for (let i = 1000; i <= 1999; i++) if ((ys[i] ?? -Infinity) > (ys[top] ?? -Infinity)) top = i;
    expect(kept).toContain(top);
  });
});
