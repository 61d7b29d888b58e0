/** The request latencies a run's distribution charts show, one per chart tab. */
export const DISTRIBUTION_METRICS = ['ttft', 'tpot', 'e2e'] as const;
export type DistributionMetric = (typeof DISTRIBUTION_METRICS)[number];

/** Bins the core counts a level's latencies into: enough for a smooth CDF, few enough to cross the wire at once. */
export const LATENCY_BINS = 80;

/** One level's latencies of one metric, counted into bins between the level's min and max (ms). */
export interface LatencyBins {
  /** Bin edges, ascending, one more than `counts`; log-spaced when `log`. */
  edges: number[];
  counts: number[];
  /** Requests counted (the sum of counts). */
  n: number;
  /** The spread spans more than a decade: the edges (and the chart's x axis) are logarithmic. */
  log: boolean;
}

/** A level's distributions (null where the level has no such latency, e.g. TPOT of one-token answers). */
interface LevelDistribution {
  /** Index into the record's levels. */
  level: number;
  bins: Record<DistributionMetric, LatencyBins | null>;
}

/** A run's latency distributions per level, counted on the core as requests.jsonl streams by. */
export interface LatencyDistribution {
  levels: LevelDistribution[];
  /** What a reader should know (lines of requests.jsonl that could not be read ...), one line each. */
  notes: string[];
}

/** Past this ratio of max to min the bins are log-spaced: a latency tail would squeeze the body into one bin. */
const LOG_RATIO = 10;

/** Bin edges over [min, max]: log-spaced for a wide spread, linear else; one bin for a single value. */
export function binEdges(min: number, max: number, bins = LATENCY_BINS): { edges: number[]; log: boolean } {
  if (!(max > min)) return { edges: [min, min === 0 ? 1 : min * 1.0001], log: false };
  const log = min > 0 && max / min > LOG_RATIO;
  const edges = Array.from({ length: bins + 1 }, (_, i) =>
    log ? min * (max / min) ** (i / bins) : min + ((max - min) * i) / bins,
  );
  edges[bins] = max;
  return { edges, log };
}

/** The bin a value falls in (the last edge belongs to the last bin); -1 outside the edges. */
export function binOf(edges: readonly number[], value: number, log: boolean): number {
  const bins = edges.length - 1;
  const min = edges[0] as number;
  const max = edges[bins] as number;
  if (!(value >= min && value <= max)) return -1;
  if (value === max) return bins - 1;
  const at = log ? Math.log(value / min) / Math.log(max / min) : (value - min) / (max - min);
  return Math.min(bins - 1, Math.max(0, Math.floor(at * bins)));
}

/** The share of requests at or below each edge: the CDF the bins make, [edge, share] from the first edge. */
export function cdfOf(bins: LatencyBins): Array<[number, number]> {
  let seen = 0;
  const out: Array<[number, number]> = [[bins.edges[0] as number, 0]];
  bins.counts.forEach((c, i) => {
    seen += c;
    out.push([bins.edges[i + 1] as number, bins.n > 0 ? seen / bins.n : 0]);
  });
  return out;
}
