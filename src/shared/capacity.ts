import { SLO_METRICS_BY_NAME, statPercentile } from './metrics.js';
import type { QuantityId } from './metrics.js';
import type { Ci, ServerVariant } from './run-record.js';

/** The quantity an SLO bounds (ttft, tpot, e2e, itl): the registry's (src/shared/metrics.ts). */
type SloMetric = QuantityId;

/** The SLO names `--slo` takes, from the metric registry: ttft_p95, ttft_p99, ttft_p99.9, tpot_p95 ... */
export const SLO_NAMES: readonly string[] = [...SLO_METRICS_BY_NAME.keys()];

/** One percentile SLO, e.g. ttft_p95=500: the level's TTFT p95 must stay at or under 500 ms. */
export interface SloTarget {
  metric: SloMetric;
  /** 95, 99, 99.9: a percentile whose summary carries an interval. */
  percentile: number;
  limitMs: number;
}

/** The registry's name of a target ("ttft_p99.9"). */
export const sloName = (t: Pick<SloTarget, 'metric' | 'percentile'>): string => `${t.metric}_p${t.percentile}`;

/** Parses `ttft_p95=500,tpot_p95=50[,e2e_p99=...]`; an error names the fix in one line. */
export function parseSloTargets(text: string): { ok: true; targets: SloTarget[] } | { ok: false; error: string } {
  const targets: SloTarget[] = [];
  const parts = text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (parts.length === 0) return { ok: false, error: 'needs at least one SLO such as ttft_p95=500' };
  for (const part of parts) {
    const m = /^([a-z0-9]+_p[0-9.]+)\s*=\s*([0-9]+(?:\.[0-9]+)?)\s*(?:ms)?$/i.exec(part);
    const def = m ? SLO_METRICS_BY_NAME.get(m[1]!.toLowerCase()) : undefined;
    if (!m || !def || def.quantity === undefined) {
      return {
        ok: false,
        error: `cannot read '${part}': write NAME=MS with NAME one of ${SLO_NAMES.join(', ')} (e.g. ttft_p95=500,tpot_p95=50)`,
      };
    }
    const limitMs = Number(m[2]);
    if (!(limitMs > 0)) return { ok: false, error: `'${part}': the limit must be a positive number of milliseconds` };
    const target: SloTarget = { metric: def.quantity, percentile: statPercentile(def.stat) ?? 0, limitMs };
    if (targets.some((t) => sloName(t) === sloName(target))) {
      return { ok: false, error: `'${part}' is given twice; keep one` };
    }
    targets.push(target);
  }
  return { ok: true, targets };
}

/** `ttft_p95≤500 ms`. */
export function sloTargetText(t: SloTarget): string {
  return `${sloName(t)}≤${t.limitMs} ms`;
}

/** Whether a level meets an SLO: proven under (CI upper bound at or under it), proven over, or neither. */
export type SloVerdict = 'meets' | 'fails' | 'uncertain';

/** One SLO judged at one level: the percentile, its interval and the verdict. */
export interface SloJudgement {
  target: SloTarget;
  valueMs: number | null;
  ci: Ci;
  verdict: SloVerdict;
  /** Why the verdict is not what the percentile alone says (too many failed requests, no interval). */
  note?: string;
}

/** One level the capacity search measured. */
export interface CapacityProbe {
  /** Concurrency (closed loop) or request rate (open loop). */
  load: number;
  /** Index of the level in record.levels. */
  levelIndex: number;
  verdict: SloVerdict;
  slos: SloJudgement[];
  /** Requests per second that met every SLO (goodput share x req/s); null when unknown. */
  goodputReqPerSec: number | null;
  outputTokPerSec: number | null;
  reqPerSec: number | null;
}

/** The level after which throughput stops rising while latency climbs, and what the engine said about it. */
export interface Saturation {
  /** The knee: the last level before throughput flattened. */
  load: number;
  /** The next level measured, where it had flattened. */
  nextLoad: number;
  throughputGain: number;
  latencyGain: number;
  /** queue: requests waited in the engine's queue; kv-cache: the engine preempted sequences (KV cache full); compute: neither, steps just got slower; unknown: no engine metrics. */
  cause: 'queue' | 'kv-cache' | 'compute' | 'unknown';
  detail: string;
}

/** What `--find-capacity` found for one shape and server: the answer, its bracket and every level it measured. */
export interface CapacityResult {
  mode: 'concurrency' | 'rate';
  /** The request shape searched (absent in runs recorded before searches named it). */
  inputLen?: number;
  outputLen?: number;
  /** In a server sweep (--vary): which configuration was searched, and its settings. */
  serverConfigIndex?: number;
  serverVariant?: ServerVariant;
  targets: SloTarget[];
  /** Highest load that met every SLO; null when none did. */
  capacity: number | null;
  /** The lowest load above it that did not (fails or uncertain); null when the search reached its bound. */
  above: number | null;
  /**
   * bracketed: capacity and above are one resolution step apart; max-reached: the bound met every SLO;
   * none-meets: even the lowest load tried did not; stopped: cancelled or a level measured nothing.
   */
  outcome: 'bracketed' | 'max-reached' | 'none-meets' | 'stopped';
  /** The search stops when above - capacity is at most this share of capacity (or 1 for concurrency). */
  resolution: number;
  maxLoad: number;
  probes: CapacityProbe[];
  outputTokPerSec: number | null;
  costPerMOutputTokUsd: number | null;
  saturation: Saturation | null;
}

/** Every capacity search of a run, in the order run: `capacities`, else the single `capacity` of one search. */
export function capacitySearches(record: {
  capacity?: CapacityResult;
  capacities?: CapacityResult[];
}): CapacityResult[] {
  return record.capacities ?? (record.capacity ? [record.capacity] : []);
}
