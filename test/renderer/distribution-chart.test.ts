import { describe, expect, it } from 'vitest';
import { distributionView } from '../../src/renderer/lib/distribution-chart.js';
import type { LatencyBins } from '../../src/shared/latency-bins.js';
import type { Summary } from '../../src/shared/run-record.js';

const summary = { p50: 15, p95: 28, p99: null } as unknown as Summary;

describe('distributionView', () => {
  it('draws a bar per bin at its middle, and marks the percentiles the level has', () => {
    const bins: LatencyBins = { edges: [10, 20, 30], counts: [7, 3], n: 10, log: false };
    const v = distributionView(bins, summary, 'histogram');
    expect(v.x).toEqual([15, 25]);
    expect(v.y).toEqual([7, 3]);
    expect(v.marks).toEqual([
      { x: 15, label: 'p50' },
      { x: 28, label: 'p95' },
    ]);
  });

  it('puts a log bin at its geometric middle, and the CDF at the edges', () => {
    const bins: LatencyBins = { edges: [1, 100, 10_000], counts: [1, 1], n: 2, log: true };
    expect(distributionView(bins, summary, 'histogram').x).toEqual([10, 1000]);
    const cdf = distributionView(bins, summary, 'cdf');
    expect(cdf.x).toEqual([1, 100, 10_000]);
    expect(cdf.y).toEqual([0, 0.5, 1]);
  });
});
