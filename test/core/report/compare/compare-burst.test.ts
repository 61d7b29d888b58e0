import { rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { compareCharts } from '../../../../src/core/report/compare/charts.js';
import { compareSeries } from '../../../../src/core/report/compare/compare.js';
import { compareMarkdown } from '../../../../src/core/report/compare/markdown.js';
import { readCompareInputs } from '../../../../src/core/report/compare/read-input.js';
import type { RunRecord } from '../../../../src/shared/run-record.js';
import { fixtureDir } from '../fixtures.js';
import { slowedCopy } from './helpers.js';

const made: string[] = [];
afterAll(async () => {
  for (const d of made) await rm(dirname(d), { recursive: true, force: true });
});

/** The closed fixture `scale` times as slow, its levels replayed as traces: bursts of 16 and 64, or at a rate. */
async function traceCopy(label: string, scale: number, load: 'burst' | 'rate'): Promise<string> {
  const dir = await slowedCopy(scale, (r: RunRecord) => {
    r.label = label;
    r.levels.forEach((l, i) => {
      l.concurrency = 0;
      if (load === 'burst') l.burst = [16, 64][i];
      else l.rate = [2.5, 10][i];
    });
  });
  made.push(dir);
  return dir;
}

describe('compare: trace bursts are their own kind of load', () => {
  it('matches a burst with a burst of the same size, and names it so', async () => {
    const c = compareSeries(
      await readCompareInputs([await traceCopy('burst', 1, 'burst'), await traceCopy('burst-slow', 2, 'burst')]),
    );
    expect(c.levels.map((l) => l.load)).toEqual([
      { kind: 'burst', value: 16 },
      { kind: 'burst', value: 64 },
    ]);
    expect(c.unmatched).toEqual([]);
    expect(c.levels[1]!.figures.find((f) => f.key === 'ttftP50')!.ratio).toBeCloseTo(2, 6);
    const md = compareMarkdown(c);
    expect(md).toContain('## burst ×64: burst-slow against burst');
    expect(md).not.toContain('c=0');
    const charts = compareCharts(c.series);
    expect(charts.map((ch) => ch.id)).toContain('cmp-throughput-burst');
    expect(charts[0]!.xLabel).toBe('burst size (requests at once)');
    expect(charts[0]!.series[0]!.points.map((p) => p.x)).toEqual([16, 64]);
  });

  it('never compares a burst with a concurrency level, and says it is not like for like', async () => {
    const c = compareSeries(await readCompareInputs([fixtureDir('closed'), await traceCopy('burst', 1, 'burst')]));
    expect(c.levels).toEqual([]);
    expect(c.unmatched).toEqual([
      'burst of 16 at once (32 in / 16 out): in burst, not in the baseline (a burst against concurrency levels is not like for like)',
      'burst of 64 at once (32 in / 16 out): in burst, not in the baseline (a burst against concurrency levels is not like for like)',
      'concurrency 1 (32 in / 16 out): in the baseline, not in burst (a concurrency level against bursts is not like for like)',
      'concurrency 4 (32 in / 16 out): in the baseline, not in burst (a concurrency level against bursts is not like for like)',
    ]);
  });

  it('compares a trace level with a rate as a rate level, and not with a burst', async () => {
    const rate = await traceCopy('rate', 1, 'rate');
    const c = compareSeries(await readCompareInputs([rate, await traceCopy('rate-slow', 2, 'rate')]));
    expect(c.levels.map((l) => l.load)).toEqual([
      { kind: 'rate', value: 2.5 },
      { kind: 'rate', value: 10 },
    ]);
    expect(compareCharts(c.series)[0]!.xLabel).toBe('request rate (req/s)');
    const mixed = compareSeries(await readCompareInputs([rate, await traceCopy('burst', 1, 'burst')]));
    expect(mixed.levels).toEqual([]);
    expect(mixed.unmatched[0]).toBe(
      'burst of 16 at once (32 in / 16 out): in burst, not in the baseline (a burst against request-rate levels is not like for like)',
    );
  });
});
