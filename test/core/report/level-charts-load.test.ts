import { describe, expect, it } from 'vitest';
import { latencyChart, levelCharts, throughputChart } from '../../../src/core/report/html/chart-data.js';
import { readRunRecord } from '../../../src/core/report/load-run-folder.js';
import type { RunRecord } from '../../../src/shared/run-record.js';
import { fixtureDir } from './fixtures.js';

/** The closed fixture's first level replayed as a trace: a burst of `burst` (no rate), or at `rate` req/s. */
async function traceRecord(load: { burst?: number; rate?: number }): Promise<RunRecord> {
  const record = structuredClone(await readRunRecord(fixtureDir('closed')));
  const level = record.levels[0]!;
  level.concurrency = 0;
  if (load.burst !== undefined) level.burst = load.burst;
  if (load.rate !== undefined) level.rate = load.rate;
  record.levels = [level];
  return record;
}

describe('HTML report charts: the x of each kind of load', () => {
  it('plots a burst at its size on a "burst size" axis, not at concurrency 0', async () => {
    const record = await traceRecord({ burst: 48 });
    const t = throughputChart(record);
    expect(t.xLabel).toBe('burst size (requests at once)');
    expect(t.logX).toBe(false);
    expect(t.xTicks).toEqual([48]);
    expect(t.series[0]!.points.map((p) => p.x)).toEqual([48]);
    const ttft = latencyChart(record, 'ttft', 'TTFT');
    expect(ttft.series.flatMap((s) => s.points.map((p) => p.x))).toEqual([48, 48, 48]);
    // The Pareto view names the level by its load.
    expect(levelCharts(record)[4]!.series[0]!.points[0]!.label).toBe('burst ×48');
  });

  it('plots a trace level with a rate as an open-loop rate level', async () => {
    const t = throughputChart(await traceRecord({ rate: 3.25 }));
    expect(t.xLabel).toBe('request rate (req/s)');
    expect(t.series[0]!.points.map((p) => p.x)).toEqual([3.25]);
  });

  it('keeps concurrency levels on a concurrency axis, and a burst beside them as its own series', async () => {
    const closed = await readRunRecord(fixtureDir('closed'));
    expect(throughputChart(closed).xLabel).toBe('concurrency (requests in flight)');
    const mixed = structuredClone(closed);
    mixed.levels.push({ ...structuredClone(closed.levels[1]!), concurrency: 0, burst: 16 });
    const t = throughputChart(mixed);
    expect(t.xLabel).toBe('burst size (requests at once) / concurrency (requests in flight)');
    expect(t.series.map((s) => [s.name, s.points.map((p) => p.x)])).toEqual([
      ['output tok/s concurrency', [1, 4]],
      ['output tok/s burst', [16]],
    ]);
  });
});
