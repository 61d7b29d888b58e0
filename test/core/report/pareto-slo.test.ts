import { describe, expect, it } from 'vitest';
import { paretoChart } from '../../../src/core/report/html/chart-data.js';
import { placeLabels } from '../../../src/core/report/html/point-labels.js';
import { renderXyChart } from '../../../src/core/report/html/xy-chart.js';
import { readRunRecord } from '../../../src/core/report/load-run-folder.js';
import type { CapacityResult } from '../../../src/shared/capacity.js';
import type { RunRecord } from '../../../src/shared/run-record.js';
import { levelSloStatus } from '../../../src/shared/slo-judge.js';
import { fixtureDir } from './fixtures.js';

/** The closed fixture (c=1: TPOT p95 10.3 ms, c=4: 11.2 ms) with intervals around each p95 and the given SLOs. */
async function withSlo(targets: string, capacity?: Partial<CapacityResult>): Promise<RunRecord> {
  const record = structuredClone(await readRunRecord(fixtureDir('closed')));
  for (const l of record.levels) {
    l.tpotMs.p95Ci = [l.tpotMs.p95! - 0.2, l.tpotMs.p95! + 0.2];
    l.ttftMs.p95Ci = [l.ttftMs.p95! - 1, l.ttftMs.p95! + 1];
  }
  record.config.slo = { targets };
  if (capacity) record.capacity = capacity as CapacityResult;
  return record;
}

const count = (svg: string, cls: string): number => svg.split(`class="${cls}"`).length - 1;

describe('Pareto chart with SLOs', () => {
  it('marks each level met or missed against every --slo target, with a legend and the targets named', async () => {
    const record = await withSlo('tpot_p95=10.8,ttft_p95=100');
    expect(levelSloStatus(record)).toEqual({
      targets: [
        { metric: 'tpot', percentile: 95, limitMs: 10.8 },
        { metric: 'ttft', percentile: 95, limitMs: 100 },
      ],
      verdicts: ['meets', 'fails'],
      capacityLevel: null,
    });
    const html = renderXyChart(paretoChart(record));
    expect(count(html, 'slo-meets')).toBe(1);
    expect(count(html, 'slo-fails')).toBe(1);
    expect(html).toContain('<span class="key slo-meets"><i></i>meets every SLO</span>');
    expect(html).toContain('<span class="key slo-fails"><i></i>misses an SLO</span>');
    expect(html).not.toContain('slo-uncertain');
    expect(html).toContain('Marks: each level against tpot_p95≤10.8 ms, ttft_p95≤100 ms');
    expect(html).toContain('<title>c=4: misses an SLO</title>');
    expect(html).not.toContain('capacity-ring');
  });

  it('an interval straddling a limit is uncertain, not met', async () => {
    const record = await withSlo('tpot_p95=11.3');
    expect(levelSloStatus(record)!.verdicts).toEqual(['meets', 'uncertain']);
    expect(renderXyChart(paretoChart(record))).toContain('uncertain (interval straddles a limit)');
  });

  it('takes the capacity search verdicts and rings and labels the capacity level', async () => {
    const record = await withSlo('', {
      mode: 'concurrency',
      targets: [{ metric: 'tpot', percentile: 95, limitMs: 11 }],
      capacity: 1,
      above: 4,
      probes: [
        { load: 1, levelIndex: 0, verdict: 'meets', slos: [], goodputReqPerSec: 1, outputTokPerSec: 1, reqPerSec: 1 },
        { load: 4, levelIndex: 1, verdict: 'fails', slos: [], goodputReqPerSec: 0, outputTokPerSec: 1, reqPerSec: 1 },
      ],
    });
    expect(levelSloStatus(record)).toMatchObject({ verdicts: ['meets', 'fails'], capacityLevel: 0 });
    const html = renderXyChart(paretoChart(record));
    expect(count(html, 'capacity-ring')).toBe(1);
    expect(html).toMatch(/<text class="pt cap"[^>]*>c=1 capacity<\/text>/);
    expect(html).toContain('<span class="key capacity-ring"><i></i>capacity</span>');
    // The TPOT target is a floor on per-user speed: its band stays.
    expect(html).toContain('<rect class="slo-band"');
  });

  it('a run without percentile SLOs keeps plain points and no SLO legend', async () => {
    const record = structuredClone(await readRunRecord(fixtureDir('closed')));
    expect(levelSloStatus(record)).toBeNull();
    const html = renderXyChart(paretoChart(record));
    expect(html).not.toMatch(/slo-(meets|fails|uncertain)|capacity-ring|Marks:/);
  });
});

describe('placeLabels', () => {
  const bounds = { x0: 0, y0: 0, x1: 400, y1: 300 };
  const overlap = (a: { x0: number; x1: number; y0: number; y1: number }, b: typeof a) =>
    a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1;

  it('places crowded labels without overlap, the first priority first, and leaves out what cannot fit', () => {
    const crowd = Array.from({ length: 12 }, (_, i) => ({
      x: 200 + i,
      y: 150 + i,
      text: `c=${100 + i}`,
      priority: i,
      gap: 6,
    }));
    const placed = placeLabels(
      [...crowd, { x: 205, y: 155, text: 'c=7 capacity', priority: -1, gap: 9, far: true }],
      bounds,
    );
    expect(placed[0]!.text).toBe('c=7 capacity');
    expect(placed.length).toBeLessThan(13);
    const boxes = placed.map((p) => {
      const w = p.text.length * 6.2;
      return {
        x0: p.anchor === 'start' ? p.x : p.x - w,
        x1: p.anchor === 'start' ? p.x + w : p.x,
        y0: p.y - 9,
        y1: p.y + 2,
      };
    });
    for (let i = 0; i < boxes.length; i++)
      for (let j = i + 1; j < boxes.length; j++) expect(overlap(boxes[i]!, boxes[j]!)).toBe(false);
  });

  it('moves a far label out with a leader line when the near spots are taken, and keeps labels inside the bounds', () => {
    const markers = [{ x0: 100, y0: 80, x1: 160, y1: 120 }];
    const [l] = placeLabels([{ x: 130, y: 100, text: 'cap', priority: 0, gap: 9, far: true }], bounds, markers);
    expect(l!.leader).toBeDefined();
    const edge = placeLabels([{ x: 398, y: 5, text: 'c=999', priority: 0, gap: 6 }], bounds);
    expect(edge[0]!.anchor).toBe('end');
    expect(edge[0]!.y).toBeGreaterThan(5);
  });
});

describe('Pareto chart of block streams', () => {
  it('leaves out levels whose whole output came in one chunk (no decoding to time) and says so', async () => {
    // The sweep fixture: a diffusion simulator whose 16-token outputs arrive in one block, TPOT ~0.002 ms.
    const record = await readRunRecord(fixtureDir('sweep'));
    const chart = paretoChart(record);
    expect(chart.series.flatMap((s) => s.points)).toEqual([]);
    expect(chart.note).toBe(
      'Not shown: 4 levels whose whole output came in one chunk (a diffusion block at least as long as the output): TPOT there measures no decoding, so there is no per-user speed.',
    );
    // The same run streamed token by token keeps its points and has no such note.
    const streamed = structuredClone(record);
    for (const l of streamed.levels) l.tokensPerChunk.p50 = 1;
    const points = paretoChart(streamed).series.flatMap((s) => s.points);
    expect(points).toHaveLength(4);
    expect(points[0]!.y).toBeCloseTo(1000 / record.levels[0]!.tpotMs.p50!, 6);
    expect(paretoChart(streamed).note).toBeUndefined();
  });
});
