import { QUANTITIES } from '../../shared/metrics.js';
import { cdfOf, type DistributionMetric, type LatencyBins } from '../../shared/latency-bins.js';
import type { LevelResult, Summary } from '../../shared/run-record.js';

/** Histogram (requests per bin) or CDF (share of requests at or below). */
export type DistributionMode = 'histogram' | 'cdf';

/** A percentile drawn as a vertical mark on the distribution. */
interface PercentileMark {
  x: number;
  label: string;
}

/** What the distribution chart draws: one series over x (ms), its marks, and whether x is logarithmic. */
export interface DistributionView {
  x: number[];
  y: number[];
  log: boolean;
  marks: PercentileMark[];
  /** Requests counted, for the caption. */
  n: number;
}

/** The level summary a metric's percentiles come from (the figure the tables show too). */
export const metricSummary = (l: LevelResult, m: DistributionMetric): Summary => QUANTITIES[m].summary(l);

/** A metric's short name, from the metric registry. */
export const metricName = (m: DistributionMetric): string => QUANTITIES[m].label;

const MARKED = ['p50', 'p95', 'p99'] as const;

/** The chart of one level's bins: a bar per bin at its middle (geometric on a log axis), or the CDF at the edges. */
export function distributionView(bins: LatencyBins, summary: Summary, mode: DistributionMode): DistributionView {
  const marks = MARKED.flatMap((p) => {
    const v = summary[p];
    return v === null || v === undefined ? [] : [{ x: v, label: p }];
  });
  if (mode === 'cdf') {
    const cdf = cdfOf(bins);
    return { x: cdf.map(([x]) => x), y: cdf.map(([, y]) => y), log: bins.log, marks, n: bins.n };
  }
  const mid = (i: number): number => {
    const a = bins.edges[i] as number;
    const b = bins.edges[i + 1] as number;
    return bins.log ? Math.sqrt(a * b) : (a + b) / 2;
  };
  return { x: bins.counts.map((_, i) => mid(i)), y: [...bins.counts], log: bins.log, marks, n: bins.n };
}
