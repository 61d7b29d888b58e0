import { METRICS, statPercentile } from '../../../shared/metrics.js';
/** Where a compared series came from. */
type SourceKind = 'servebench' | 'vllm' | 'sglang' | 'aiperf' | 'guidellm' | 'inference-perf' | 'llmd-report';

/**
 * How a figure another tool wrote stands to servebench's definition of it: 'same' (the tool defines it as servebench
 * does), 'converted' (computed here, exactly, from what the tool wrote) or 'differs' (another quantity: shown under the
 * tool's own name, never compared with servebench's figure).
 */
export interface FigureSource {
  match: 'same' | 'converted' | 'differs';
  /** The tool's own name for the figure, e.g. "AIPerf inter_token_latency p50". */
  name: string;
  /** Its definition in the tool's source and where it differs from servebench's, in a sentence. */
  note: string;
}

/** One request as compare needs it (ms; null where the request cannot define the figure). */
export interface CompareRequest {
  ttftMs: number | null;
  tpotMs: number | null;
  e2eMs: number | null;
  /** Output tokens of a successful request, 0 for a failed one (throughput counts only what was delivered). */
  outTokens: number;
}

/** A block of the block bootstrap: one round of a level (or a whole file's run when it knows no rounds). */
export interface CompareBlock {
  windowMs: number;
  requests: CompareRequest[];
}

/** The figures compare puts side by side: the registry's figures with a compare key (src/shared/metrics.ts). */
export type FigureKey = string;

/** The summary figures of a level (null = not recorded by the tool that wrote it). */
export type LevelFigures = Record<FigureKey, number | null>;

/** The load a level ran at: the matching key between series. */
export interface LevelLoad {
  /** A trace whose arrivals span 0 ms is a burst: `value` requests at once, matched only with another burst. */
  kind: 'concurrency' | 'rate' | 'burst';
  value: number;
}

/** One level of one series. */
export interface CompareLevel {
  load: LevelLoad;
  figures: LevelFigures;
  /** Per-round requests for the bootstrap; absent when the file carries only summaries. */
  blocks?: CompareBlock[];
  /** Per figure, why the bootstrap cannot use per-request data (a file without per-request lists ...). */
  missingRequests?: Partial<Record<FigureKey, string>>;
  /** True when the level was cut short. */
  partial?: boolean;
  /** Requested input and output tokens (run folders): a length sweep has several levels at one load. */
  lengths?: [number, number];
  /** The load really offered, for people (run folders that measured it: "63.8 (p5 63)" in flight, "9.8/s"). */
  offered?: string;
}

/** The conditions a series was measured under (undefined = not recorded). */
export interface Conditions {
  measuredBy: string;
  engine?: string;
  model?: string;
  quantization?: string;
  gpu?: string;
  /** Mean (or requested) tokens in and out per request. */
  inputLen?: number;
  outputLen?: number;
  diffusion?: string;
  servebenchVersion?: string;
  simulated?: boolean;
  /** Every other server setting that is a condition of the measurement, as `flag=value` (see condition-settings.ts). */
  serverSettings?: string;
  /** The load settings that shape the requests (endpoint, temperature, prompt file ...), as `flag=value`. */
  workload?: string;
}

/** One series: a run folder (one per server configuration of a sweep) or one result file. */
export interface CompareSeries {
  label: string;
  source: SourceKind;
  path: string;
  conditions: Conditions;
  levels: CompareLevel[];
  notes: string[];
  /** Why a figure may be absent from this tool's files (named where one is). */
  figureHint?: string;
  /** Per figure, how the tool that wrote the file defines it (absent: servebench's own definition). */
  definitions?: Partial<Record<FigureKey, FigureSource>>;
}

/** A compared figure: its registry entry's label, unit and direction, and the per-request latency it is a percentile of. */
export interface CompareFigure {
  key: FigureKey;
  label: string;
  unit: string;
  higherIsBetter: boolean;
  /** Absent for throughput (a level-wide figure). */
  quantity?: CompareQuantity;
  percentile?: number;
}

/** The per-request latencies compare carries (CompareRequest's fields). */
export type CompareQuantity = 'ttft' | 'tpot' | 'e2e';
const isCompareQuantity = (q: string | undefined): q is CompareQuantity => q === 'ttft' || q === 'tpot' || q === 'e2e';

export const FIGURES: readonly CompareFigure[] = METRICS.flatMap((m): CompareFigure[] => {
  const key = m.views.compare;
  if (key === undefined) return [];
  const p = statPercentile(m.stat);
  const base = { key, label: m.title ?? m.label, unit: m.unit, higherIsBetter: m.direction === 'higher' };
  return [isCompareQuantity(m.quantity) && p !== null ? { ...base, quantity: m.quantity, percentile: p } : base];
});

/** An all-null figure set. */
export function noFigures(): LevelFigures {
  return Object.fromEntries(FIGURES.map((f) => [f.key, null]));
}

/** "c=4", "4 req/s" or "burst ×8", with the lengths where a series sweeps them. */
export function loadText(load: LevelLoad, lengths?: [number, number]): string {
  const at =
    load.kind === 'rate' ? `${load.value} req/s` : load.kind === 'burst' ? `burst ×${load.value}` : `c=${load.value}`;
  return lengths ? `${at}, ${lengths[0]} in / ${lengths[1]} out` : at;
}
