import type { LevelResult, OfferedLoad, RunRecord } from './run-record.js';
import { DASH, fmtDurationMs, fmtNumber, fmtShare, fmtValue } from './format.js';
import { lengthsText, loadText, loadValue } from './level-load.js';
import { METRICS, metricApplies } from './metrics.js';
import type { MetricDef, QuantityId } from './metrics.js';

/** One level of one run: what a table row is made from. */
export interface LevelRow {
  level: LevelResult;
  record: RunRecord;
}

/** A table column: its header beside its value, defined once for every table and export that shows it. */
export interface Column {
  /** Machine name (CSV header, JSON key). */
  key: string;
  /** Header for people (the CLI table, the app, HTML, Markdown). */
  header: string;
  /** Columns that share a group ("TTFT") may sit under one heading; the header minus the group names the column. */
  group?: string;
  /** Unit shown under or after the header, if any. */
  unit?: string;
  /** The value itself (null = not measured / not applicable). */
  value: (row: LevelRow) => number | string | boolean | null;
  /** The value for people; defaults to the value. */
  text?: (row: LevelRow) => string;
  /** Decimal places in CSV. */
  digits?: number;
  /** Shown only when some row needs it (e.g. rate only in open loop). */
  when?: (rows: readonly LevelRow[]) => boolean;
}

const failedIds = (l: LevelResult): string =>
  l.checks
    .filter((c) => c.status === 'fail')
    .map((c) => c.id)
    .join(' ');
const warnedIds = (l: LevelResult): string =>
  l.checks
    .filter((c) => c.status === 'warn')
    .map((c) => c.id)
    .join(' ');

/**
 * The load a level really offered, for people: closed loop, requests in flight on average and their p5 ("63.8 (p5
 * 63)"; multi-turn: conversations, "7.9 conv (p5 7)"); open loop, requests sent per second and the schedule lag p99
 * ("9.8/s, lag p99 3.1 ms"). A dash when not measured (runs before it).
 */
export function offeredText(o: OfferedLoad | undefined, scheduleLagP99Ms?: number | null): string {
  if (o?.conversationsMean !== undefined)
    return `${fmtNumber(o.conversationsMean)} conv (p5 ${fmtNumber(o.conversationsP5)})`;
  if (o?.inFlightMean !== undefined) return `${fmtNumber(o.inFlightMean)} (p5 ${fmtNumber(o.inFlightP5)})`;
  if (o?.ratePerSec !== undefined) {
    const lag = typeof scheduleLagP99Ms === 'number' ? `, lag p99 ${fmtDurationMs(scheduleLagP99Ms)}` : '';
    return `${fmtNumber(o.ratePerSec)}/s${lag}`;
  }
  return DASH;
}

/** The offered load as one number: in flight (conversations in multi-turn) in closed loop, req/s sent in open loop. */
function offeredValue(o: OfferedLoad | undefined): number | null {
  return o?.conversationsMean ?? o?.inFlightMean ?? o?.ratePerSec ?? null;
}

/** "threshold=0.9 block_size=32" for a server variant, or the configuration's index. */
export function variantLabel(level: LevelResult, short = false): string {
  if (!level.serverVariant) return String(level.serverConfigIndex);
  return Object.entries(level.serverVariant)
    .map(([k, v]) => `${short ? (k.split('.').pop() ?? k) : k}=${String(v)}`)
    .join(short ? ',' : ' ');
}

/** A level in one phrase: its load and lengths, and its server settings in a server sweep (levels differ by them). */
export function levelTitle(l: LevelResult): string {
  const load = loadText(l);
  return `${load} ${lengthsText(l)}${l.serverVariant ? ` ${variantLabel(l, true)}` : ''}`;
}

/** Checks of a level in one cell: "ok", or the failed and warned ids. */
function checksText(level: LevelResult): string {
  const f = failedIds(level);
  const w = warnedIds(level);
  if (!f && !w) return 'ok';
  return [f ? `FAIL ${f.split(' ').join(',')}` : '', w ? `warn ${w.split(' ').join(',')}` : '']
    .filter(Boolean)
    .join('; ');
}

const manyVariants = (rows: readonly LevelRow[]): boolean =>
  new Set(rows.map((r) => r.level.serverConfigIndex)).size > 1;
const manyLengths = (rows: readonly LevelRow[]): boolean =>
  new Set(rows.map((r) => `${r.level.inputLen}/${r.level.outputLen}`)).size > 1;
const openLoop = (rows: readonly LevelRow[]): boolean => rows.some((r) => r.level.rate !== undefined);
const bursts = (rows: readonly LevelRow[]): boolean => rows.some((r) => r.level.burst !== undefined);
const pricedInput = (rows: readonly LevelRow[]): boolean => rows.some((r) => r.level.costPerMInputTokUsd !== undefined);
const priced = (rows: readonly LevelRow[]): boolean => rows.some((r) => r.level.costPerMOutputTokUsd !== undefined);
const atUtil = (rows: readonly LevelRow[]): boolean =>
  rows.some((r) => r.level.costPerMOutputTokAtUtilizationUsd !== undefined);
/**
 * A level's prefix-cache hit rate: from the responses' cached tokens where every response reported them (exact per
 * request), else from the engine's counters (scraped once a second, so a short level's figure is rough).
 */
export function prefixCacheHitRate(level: LevelResult): number | null {
  return level.responseCache?.hitRate ?? level.telemetry?.prefixCacheHitRate ?? null;
}

/** Runs whose workload uses the prefix cache on purpose (shared prefix, trace, prompt file), or levels that hit it. */
const cacheMatters = (rows: readonly LevelRow[]): boolean =>
  rows.some(
    (r) =>
      r.record.config.prefixGroups !== undefined ||
      r.record.config.trace !== undefined ||
      r.record.config.prompts !== undefined ||
      (prefixCacheHitRate(r.level) ?? 0) > 0,
  );
const withSlo = (rows: readonly LevelRow[]): boolean =>
  rows.some((r) => r.level.goodput !== undefined && r.level.goodput !== null);

const offeredMeasured = (rows: readonly LevelRow[]): boolean => rows.some((r) => r.level.offered !== undefined);

/** The load really offered beside the asked one (docs/offered-load.md): one definition for every table and export. */
const OFFERED_COLUMN: Column = {
  key: 'offered',
  header: 'offered',
  value: ({ level }) => offeredValue(level.offered),
  text: ({ level }) => offeredText(level.offered, level.scheduleLagMs?.p99),
  digits: 3,
  when: offeredMeasured,
};

const share = (v: number | null | undefined): string => fmtShare(v);

/** A figure's column is shown only where some row's endpoint kind gives it a meaning (no TTFT for embeddings). */
const appliesTo =
  (m: MetricDef, when?: Column['when']): Column['when'] =>
  (rows) =>
    rows.some((r) => metricApplies(m, r.record.config.api ?? 'chat')) && (when === undefined || when(rows));

/** A registry figure as a column: a duration carries its unit in the cell (it may switch to s), others in the header. */
function metricColumn(m: MetricDef, shownWhen?: Column['when']): Column {
  const when = m.endpoints === undefined ? shownWhen : appliesTo(m, shownWhen);
  return {
    key: m.key,
    header: m.label,
    ...(m.group ? { group: m.group } : {}),
    ...(m.unit !== 'ms' && m.unit !== '' && m.unit !== '%' && !m.label.includes(m.unit) ? { unit: m.unit } : {}),
    value: ({ level }) => m.level(level),
    text: ({ level }) =>
      m.unit === 'ms'
        ? fmtDurationMs(m.level(level))
        : m.unit === '%'
          ? share(m.level(level))
          : fmtNumber(m.level(level)),
    ...(m.digits !== undefined ? { digits: m.digits } : {}),
    ...(when ? { when } : {}),
  };
}

/** The people's table columns of the registry's figures (of one quantity, or the level-wide ones). */
function tableColumns(quantity: QuantityId | null): Column[] {
  return METRICS.filter((m) => m.views.table && (m.quantity ?? null) === quantity).map((m) => {
    const shown = m.views.table;
    return metricColumn(m, typeof shown === 'function' ? (rows) => shown(rows.map((r) => r.level)) : undefined);
  });
}

/** summary.csv's columns of the registry's figures: the first set, or those added after it (only where measured). */
function csvColumns(set: 'core' | 'appended'): Column[] {
  return METRICS.filter((m) => m.views.csv === set).map((m) =>
    metricColumn(m, set === 'appended' ? (rows) => rows.some((r) => m.level(r.level) !== null) : undefined),
  );
}

/** Output throughput in the people's tables: `*` marks a level cut short. */
const throughputColumns = (): Column[] =>
  tableColumns(null).map((c) => ({
    ...c,
    text: (row: LevelRow) => (c.text ? c.text(row) : DASH) + (row.level.partial ? '*' : ''),
  }));

/** The source article's table (one row per level): the CLI table, the HTML report and Markdown show these. */
export const ARTICLE_COLUMNS: readonly Column[] = [
  { key: 'server', header: 'server', value: ({ level }) => variantLabel(level, true), when: manyVariants },
  {
    key: 'lengths',
    header: 'in/out',
    value: ({ level }) => lengthsText(level),
    when: manyLengths,
  },
  {
    key: 'concurrency',
    header: 'conc',
    value: ({ level }) => level.concurrency,
    when: (rows) => !openLoop(rows) && !bursts(rows),
  },
  // A trace whose arrivals share one time has no rate: the table says so rather than divide by zero.
  {
    key: 'arrivals',
    header: 'arrivals',
    value: ({ level }) => (level.burst !== undefined ? loadText(level) : null),
    when: bursts,
  },
  {
    key: 'rate',
    header: 'rate',
    unit: 'req/s',
    value: ({ level }) => level.rate ?? null,
    when: openLoop,
  },
  OFFERED_COLUMN,
  ...throughputColumns(),
  ...tableColumns('ttft'),
  {
    key: 'prefix_cache_hit_rate',
    header: 'cache hit',
    value: ({ level }) => prefixCacheHitRate(level),
    text: ({ level }) => share(prefixCacheHitRate(level)),
    when: cacheMatters,
  },
  ...tableColumns('tpot'),
  ...tableColumns('itl'),
  ...tableColumns('e2e'),
  {
    key: 'cost_per_m_output_usd',
    header: '$/1M out',
    value: ({ level }) => level.costPerMOutputTokUsd ?? null,
    text: ({ level }) => fmtValue(level.costPerMOutputTokUsd, '$', 3),
    when: priced,
  },
  {
    key: 'cost_per_m_output_at_utilization_usd',
    header: '$/1M out at util.',
    value: ({ level }) => level.costPerMOutputTokAtUtilizationUsd ?? null,
    text: ({ level }) => fmtValue(level.costPerMOutputTokAtUtilizationUsd, '$', 3),
    when: atUtil,
  },
  {
    key: 'cost_per_m_input_usd',
    header: '$/1M in',
    value: ({ level }) => level.costPerMInputTokUsd ?? null,
    text: ({ level }) => fmtValue(level.costPerMInputTokUsd, '$', 3),
    when: pricedInput,
  },
  {
    key: 'goodput',
    header: 'goodput',
    value: ({ level }) => level.goodput ?? null,
    text: ({ level }) => fmtShare(level.goodput),
    when: withSlo,
  },
  { key: 'checks', header: 'checks', value: ({ level }) => checksText(level) },
];

/**
 * summary.csv, one row per level: the article's table plus conditions (names are a contract: add, never rename).
 * A column with `when` appears only in runs that need it, so the header of runs without it stays as it was.
 */
export const SUMMARY_CSV_COLUMNS: readonly Column[] = [
  {
    key: 'server_config',
    header: 'server',
    value: ({ level }) => (level.serverVariant ? variantLabel(level) : String(level.serverConfigIndex)),
  },
  { key: 'concurrency', header: 'concurrency', value: ({ level }) => level.concurrency },
  { key: 'rate', header: 'rate', unit: 'req/s', value: ({ level }) => level.rate ?? null, digits: 3 },
  // Only in runs with a trace burst: files of runs without one keep their header.
  { key: 'burst', header: 'burst', unit: 'requests at once', value: ({ level }) => level.burst ?? null, when: bursts },
  { key: 'input_len', header: 'input tokens', value: ({ level }) => level.inputLen },
  { key: 'output_len', header: 'output tokens', value: ({ level }) => level.outputLen },
  { key: 'completed', header: 'completed', value: ({ level }) => level.completed },
  { key: 'failed', header: 'failed', value: ({ level }) => level.failed },
  ...csvColumns('core'),
  // Only in runs that use or hit the prefix cache: files of other runs keep their header.
  {
    key: 'prefix_cache_hit_rate',
    header: 'prefix cache hit rate',
    value: ({ level }) => prefixCacheHitRate(level),
    digits: 4,
    when: cacheMatters,
  },
  {
    key: 'cost_per_m_output_usd',
    header: '$/1M out',
    value: ({ level }) => level.costPerMOutputTokUsd ?? null,
    digits: 4,
  },
  {
    key: 'cost_per_m_output_at_utilization_usd',
    header: '$/1M out at util.',
    value: ({ level }) => level.costPerMOutputTokAtUtilizationUsd ?? null,
    digits: 4,
  },
  { key: 'goodput', header: 'goodput', value: ({ level }) => level.goodput ?? null, digits: 4 },
  { key: 'checks_failed', header: 'failed checks', value: ({ level }) => failedIds(level) },
  { key: 'checks_warned', header: 'warned checks', value: ({ level }) => warnedIds(level) },
  { key: 'simulated', header: 'simulated', value: ({ record }) => record.simulated },
  // Added last, and only in runs that measured them: files of older runs keep their header and column order.
  OFFERED_COLUMN,
  {
    key: 'offered_p5',
    header: 'offered p5',
    value: ({ level }) => level.offered?.conversationsP5 ?? level.offered?.inFlightP5 ?? null,
    when: offeredMeasured,
  },
  {
    key: 'schedule_lag_p99_ms',
    header: 'schedule lag p99',
    unit: 'ms',
    value: ({ level }) => level.scheduleLagMs?.p99 ?? null,
    digits: 3,
    when: (rows) => rows.some((r) => r.level.scheduleLagMs !== undefined && r.level.offered !== undefined),
  },
  ...csvColumns('appended'),
  // Pooling runs only (embeddings, rerank): files of generation runs keep their header.
  {
    key: 'cost_per_m_input_usd',
    header: '$/1M in',
    value: ({ level }) => level.costPerMInputTokUsd ?? null,
    digits: 4,
    when: pricedInput,
  },
  {
    key: 'cost_per_m_input_at_utilization_usd',
    header: '$/1M in at util.',
    value: ({ level }) => level.costPerMInputTokAtUtilizationUsd ?? null,
    digits: 4,
    when: (rows) => rows.some((r) => r.level.costPerMInputTokAtUtilizationUsd !== undefined),
  },
];

const tel = (row: LevelRow): NonNullable<LevelResult['telemetry']> | undefined => row.level.telemetry;

/** The per-level telemetry table: GPU clocks, temperature, power, throttling and the engine's queue. */
export const TELEMETRY_COLUMNS: readonly Column[] = [
  { key: 'server', header: 'server', value: ({ level }) => variantLabel(level, true), when: manyVariants },
  {
    key: 'load',
    header: 'load',
    value: ({ level }) => loadValue(level),
    text: ({ level }) =>
      level.rate !== undefined || level.burst !== undefined ? loadText(level, true) : String(level.concurrency),
  },
  { key: 'source', header: 'source', value: (r) => tel(r)?.source ?? 'none' },
  {
    key: 'sm_clock_mean_mhz',
    header: 'SM clock mean',
    unit: 'MHz',
    value: (r) => tel(r)?.smClockMeanMhz ?? null,
    text: (r) => fmtNumber(tel(r)?.smClockMeanMhz),
  },
  {
    key: 'clock_ratio_min',
    header: 'lowest clock',
    unit: '% of max',
    value: (r) => tel(r)?.clockRatioMin ?? null,
    text: (r) => share(tel(r)?.clockRatioMin),
  },
  {
    key: 'temp_max_c',
    header: 'temp max',
    unit: '°C',
    value: (r) => tel(r)?.tempMaxC ?? null,
    text: (r) => fmtNumber(tel(r)?.tempMaxC),
  },
  {
    key: 'power_mean_w',
    header: 'power mean',
    unit: 'W',
    value: (r) => tel(r)?.powerMeanW ?? null,
    text: (r) => fmtNumber(tel(r)?.powerMeanW),
  },
  {
    key: 'j_per_output_tok',
    header: 'J / out tok',
    value: (r) => tel(r)?.jPerOutputTok ?? null,
    text: (r) => fmtNumber(tel(r)?.jPerOutputTok),
  },
  {
    key: 'thermal_fraction',
    header: 'thermal',
    value: (r) => tel(r)?.throttle.thermalFraction ?? null,
    text: (r) => share(tel(r)?.throttle.thermalFraction),
  },
  {
    key: 'hw_slowdown_fraction',
    header: 'HW slow',
    value: (r) => tel(r)?.throttle.hwSlowdownFraction ?? null,
    text: (r) => share(tel(r)?.throttle.hwSlowdownFraction),
    // Rare and serious (a failing fan or power brake): a column only when some level saw it.
    when: (rows) => rows.some((r) => (tel(r)?.throttle.hwSlowdownFraction ?? 0) > 0),
  },
  {
    key: 'power_cap_fraction',
    header: 'power cap',
    value: (r) => tel(r)?.throttle.powerCapFraction ?? null,
    text: (r) => share(tel(r)?.throttle.powerCapFraction),
  },
  {
    key: 'kv_usage_peak',
    header: 'KV peak',
    value: (r) => tel(r)?.kvUsagePeak ?? null,
    text: (r) => share(tel(r)?.kvUsagePeak),
  },
  {
    key: 'waiting_peak',
    header: 'waiting peak',
    value: (r) => tel(r)?.waitingPeak ?? null,
    text: (r) => fmtNumber(tel(r)?.waitingPeak),
  },
  {
    key: 'preemptions',
    header: 'preemptions',
    value: (r) => tel(r)?.preemptions ?? null,
    text: (r) => fmtNumber(tel(r)?.preemptions),
  },
];

/** The rows of a record. */
export function levelRows(record: RunRecord): LevelRow[] {
  return record.levels.map((level) => ({ level, record }));
}

/** The columns a set of rows needs (drops those whose `when` says no). */
export function visibleColumns(columns: readonly Column[], rows: readonly LevelRow[]): Column[] {
  return columns.filter((c) => !c.when || c.when(rows));
}

/** A cell for people. */
export function cellText(column: Column, row: LevelRow): string {
  if (column.text) return column.text(row);
  const v = column.value(row);
  if (typeof v === 'number') return fmtNumber(v);
  return v === null ? DASH : String(v);
}

/** A cell for machines (CSV): numbers rounded to the column's digits, empty when unknown. */
export function cellCsv(column: Column, row: LevelRow): string {
  const v = column.value(row);
  if (v === null || v === undefined) return '';
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) return '';
    return column.digits === undefined ? String(v) : String(Number(v.toFixed(column.digits)));
  }
  return String(v);
}

/** A header cell of a two-row header: `span` 0 is a column without a group (both rows), else a group over `span` columns. */
export interface HeadCell {
  key: string;
  label: string;
  span: number;
}

/** Two header rows for tables that group columns ("TTFT (ms)" over "p50 p95"); the second row is empty when none is grouped. */
export function columnHeads(columns: readonly Column[]): { top: HeadCell[]; sub: HeadCell[] } {
  const top: HeadCell[] = [];
  const sub: HeadCell[] = [];
  const withUnit = (label: string, unit?: string): string => (unit ? `${label} (${unit})` : label);
  for (const c of columns) {
    if (!c.group) {
      top.push({ key: c.key, label: withUnit(c.header, c.unit), span: 0 });
      continue;
    }
    const last = top[top.length - 1];
    if (last && last.span > 0 && last.key === `group:${c.group}`) last.span++;
    else top.push({ key: `group:${c.group}`, label: withUnit(c.group, c.unit), span: 1 });
    sub.push({
      span: 1,
      key: c.key,
      label: c.header.startsWith(`${c.group} `) ? c.header.slice(c.group.length + 1) : c.header,
    });
  }
  return { top, sub };
}
