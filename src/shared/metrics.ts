import { isPooling, type EndpointKind } from './endpoint-kinds.js';
import type { Unit } from './format.js';
import { requestE2eMs, requestTpotMs, requestTtftMs } from './request-record.js';
import type { RequestRecord } from './request-record.js';
import type { Ci, LevelResult, Summary } from './run-record.js';

/**
 * The metric registry: one entry per figure servebench reports, and every table, export, compare and SLO parser
 * iterates it. A figure added here (with the views it belongs to) appears in each of them; nothing else names it.
 */

/** A latency measured per request, whose distribution a level summarises. */
export interface Quantity {
  id: 'ttft' | 'tpot' | 'itl' | 'e2e';
  /** Short name for people ("TTFT"). */
  label: string;
  /** The level's summary of it. */
  summary: (level: LevelResult) => Summary;
  /** Its value for one request; null where ITL gives several per request. */
  perRequest: ((record: RequestRecord) => number | null) | null;
  /** vLLM's name in `vllm bench serve` results (mean_<name>_ms ...). */
  vllm: string;
}

export const QUANTITIES = {
  ttft: { id: 'ttft', label: 'TTFT', summary: (l) => l.ttftMs, perRequest: requestTtftMs, vllm: 'ttft' },
  tpot: { id: 'tpot', label: 'TPOT', summary: (l) => l.tpotMs, perRequest: requestTpotMs, vllm: 'tpot' },
  itl: { id: 'itl', label: 'ITL', summary: (l) => l.itlMs, perRequest: null, vllm: 'itl' },
  e2e: { id: 'e2e', label: 'E2E', summary: (l) => l.e2eMs, perRequest: requestE2eMs, vllm: 'e2el' },
} as const satisfies Record<Quantity['id'], Quantity>;

export type QuantityId = keyof typeof QUANTITIES;

/** A statistic of a summary. Percentiles with an interval (95, 99, 99.9) can carry an SLO. */
export type Stat = 'mean' | 'std' | 'p50' | 'p90' | 'p95' | 'p99' | 'p99.9';

/** Where a figure is shown: the people's tables (CLI, app, HTML, Markdown), summary.csv, compare, vLLM's JSON. */
interface MetricViews {
  /** The results table; a function shows the column only for rows that need it. */
  table?: boolean | ((levels: readonly LevelResult[]) => boolean);
  /** summary.csv: 'core' in the file's first column set, 'appended' after it (added later; headers stay stable). */
  csv?: 'core' | 'appended';
  /** compare: the figure's key there (also its bootstrap). */
  compare?: string;
  /** vLLM's result key, where vLLM writes the figure. */
  vllm?: boolean;
  /** The live view's figures so far (provisional, from the requests finished). */
  live?: boolean;
}

/** One figure of the registry. */
export interface MetricDef {
  /** Machine key: CSV header and JSON key ("ttft_p95_ms"). */
  key: string;
  /** For people ("TTFT p95"). */
  label: string;
  /** A longer name where the label is terse ("output throughput" for "out tok/s"). */
  title?: string;
  /** Figures of one quantity sit under one heading ("TTFT"). */
  group?: string;
  unit: Unit;
  direction: 'lower' | 'higher';
  /** The per-request quantity it summarises, and the statistic; absent for level-wide figures (throughput). */
  quantity?: QuantityId;
  stat?: Stat;
  /** The figure of a level; null when not measured (or not recorded by the version that wrote the run). */
  level: (level: LevelResult) => number | null;
  /** The distribution-free interval of a percentile, where the summary carries one. */
  ci?: (level: LevelResult) => Ci;
  /** The name `--slo` takes ("ttft_p95"): percentiles with an interval. */
  slo?: string;
  /** Decimal places in summary.csv. */
  digits?: number;
  /** The key in `vllm bench serve --save-result` output (vllm/benchmarks/serve.py: mean_/median_/std_/p<P>_<name>_ms). */
  vllmKey?: string;
  views: MetricViews;
  /** The endpoint kinds it means something for: 'generation' (chat, completions) or 'pooling'; absent: every kind. */
  endpoints?: 'generation' | 'pooling';
}

/** Whether a figure means anything for an endpoint kind (TTFT has no meaning for embeddings): else not shown. */
export function metricApplies(m: MetricDef, endpoint: EndpointKind): boolean {
  if (m.endpoints === undefined) return true;
  return (m.endpoints === 'pooling') === isPooling(endpoint);
}

const PERCENTILE: Partial<Record<Stat, number>> = { p50: 50, p90: 90, p95: 95, p99: 99, 'p99.9': 99.9 };

function statOf(s: Summary, stat: Stat): number | null {
  switch (stat) {
    case 'mean':
      return s.mean;
    case 'std':
      return s.std;
    case 'p99.9':
      return s.p999 ?? null;
    default:
      return s[stat];
  }
}

function ciOf(stat: Stat): ((s: Summary) => Ci) | undefined {
  if (stat === 'p95') return (s) => s.p95Ci;
  if (stat === 'p99') return (s) => s.p99Ci;
  if (stat === 'p99.9') return (s) => s.p999Ci ?? null;
  return undefined;
}

/** vLLM's key of a statistic: `p_word = str(int(p)) if int(p) == p else str(p)`, so p99.9 is "p99.9_ttft_ms". */
export function vllmKeyOf(id: QuantityId, stat: Stat): string {
  return `${stat === 'p50' ? 'median' : stat}_${QUANTITIES[id].vllm}_ms`;
}

/** A latency figure: one line of the registry. */
function latency(id: QuantityId, stat: Stat, views: MetricViews): MetricDef {
  // Only E2E exists for a whole answer: TTFT, TPOT and ITL time a stream of generated tokens.
  const generation = id !== 'e2e';
  const q: Quantity = QUANTITIES[id];
  const ci = ciOf(stat);
  const p = PERCENTILE[stat];
  return {
    key: `${id}_${stat.replace('.', '')}_ms`,
    label: `${q.label} ${stat}`,
    group: q.label,
    unit: 'ms',
    direction: 'lower',
    quantity: id,
    stat,
    digits: 3,
    level: (l) => statOf(q.summary(l), stat),
    ...(ci ? { ci: (l: LevelResult) => ci(q.summary(l)), slo: `${id}_p${p}` } : {}),
    ...(views.vllm ? { vllmKey: vllmKeyOf(id, stat) } : {}),
    ...(generation ? { endpoints: 'generation' as const } : {}),
    views,
  };
}

/** Where a percentile's column is worth a table's room: some level holds enough samples for one to lie above it. */
const sampledFor =
  (id: QuantityId, p: number) =>
  (levels: readonly LevelResult[]): boolean =>
    levels.some((l) => QUANTITIES[id].summary(l).n >= Math.ceil(100 / (100 - p)));

/** Every figure, in the order the tables and summary.csv show them. */
export const METRICS: readonly MetricDef[] = [
  {
    key: 'output_tok_s',
    label: 'out tok/s',
    title: 'output throughput',
    unit: 'tok/s',
    direction: 'higher',
    level: (l) => l.outputTokPerSec,
    digits: 1,
    vllmKey: 'output_throughput',
    views: { table: true, csv: 'core', compare: 'throughput', vllm: true },
    endpoints: 'generation',
  },
  {
    key: 'inputs_s',
    label: 'inputs/s',
    title: 'inputs embedded or scored per second',
    unit: 'inputs/s',
    direction: 'higher',
    level: (l) => l.inputsPerSec ?? null,
    digits: 1,
    views: { table: true, csv: 'appended' },
    endpoints: 'pooling',
  },
  {
    key: 'input_tok_s',
    label: 'in tok/s',
    title: 'input throughput',
    unit: 'tok/s',
    direction: 'higher',
    level: (l) => l.inputTokPerSec ?? null,
    digits: 1,
    views: { table: true, csv: 'appended' },
    endpoints: 'pooling',
  },
  {
    key: 'total_tok_s',
    label: 'total tok/s',
    unit: 'tok/s',
    direction: 'higher',
    level: (l) => l.totalTokPerSec,
    digits: 1,
    vllmKey: 'total_token_throughput',
    views: { csv: 'core', vllm: true },
  },
  {
    key: 'req_s',
    label: 'req/s',
    unit: 'req/s',
    direction: 'higher',
    level: (l) => l.reqPerSec,
    digits: 3,
    vllmKey: 'request_throughput',
    views: { csv: 'core', vllm: true },
  },
  {
    key: 'round_cv',
    label: 'round CV',
    unit: '',
    direction: 'lower',
    level: (l) => l.roundCv,
    digits: 4,
    views: { csv: 'core' },
  },
  {
    key: 'structured_valid',
    label: 'valid',
    title: 'answers that were what --response-format or --tools asked',
    unit: '%',
    direction: 'higher',
    level: (l) => l.structuredValidRate ?? null,
    digits: 4,
    views: { table: (levels) => levels.some((l) => l.structuredValidRate !== undefined), csv: 'appended' },
    endpoints: 'generation',
  },
  latency('ttft', 'mean', { vllm: true }),
  latency('ttft', 'p50', { table: true, csv: 'core', compare: 'ttftP50', vllm: true, live: true }),
  latency('ttft', 'std', { vllm: true }),
  latency('ttft', 'p95', { table: true, csv: 'core', compare: 'ttftP95', live: true }),
  latency('ttft', 'p99', { csv: 'core', vllm: true }),
  latency('ttft', 'p99.9', { table: sampledFor('ttft', 99.9), csv: 'appended', compare: 'ttftP999', vllm: true }),
  latency('tpot', 'mean', { vllm: true }),
  latency('tpot', 'p50', { table: true, csv: 'core', compare: 'tpotP50', vllm: true }),
  latency('tpot', 'std', { vllm: true }),
  latency('tpot', 'p95', { table: true, csv: 'core', compare: 'tpotP95' }),
  latency('tpot', 'p99', { vllm: true }),
  latency('itl', 'mean', { vllm: true }),
  latency('itl', 'p50', { csv: 'core', vllm: true }),
  latency('itl', 'std', { vllm: true }),
  latency('itl', 'p95', { csv: 'core' }),
  latency('itl', 'p99', { vllm: true }),
  latency('e2e', 'mean', { vllm: true }),
  latency('e2e', 'p50', { table: true, csv: 'core', compare: 'e2eP50', vllm: true, live: true }),
  latency('e2e', 'std', { vllm: true }),
  latency('e2e', 'p95', { table: true, csv: 'core', compare: 'e2eP95' }),
  latency('e2e', 'p99', { vllm: true }),
];

/** The figures an SLO can bound, by their `--slo` name. */
export const SLO_METRICS_BY_NAME: ReadonlyMap<string, MetricDef> = new Map(
  METRICS.filter((m) => m.slo !== undefined).map((m) => [m.slo as string, m]),
);

/** The figure of a registry key; throws on a key no entry has (a programming error, not a user's). */
export function metric(key: string): MetricDef {
  const m = METRICS.find((x) => x.key === key);
  if (!m) throw new Error(`no metric ${key} in the registry`);
  return m;
}

/** The percentile of a statistic ("p99.9" → 99.9); null for mean and std. */
export function statPercentile(stat: Stat | undefined): number | null {
  return stat === undefined ? null : (PERCENTILE[stat] ?? null);
}
