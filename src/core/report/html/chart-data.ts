import { QUANTITIES } from '../../../shared/metrics.js';
import type { QuantityId } from '../../../shared/metrics.js';
import { capacitySearches } from '../../../shared/capacity.js';
import type { LevelResult, RunRecord } from '../../../shared/run-record.js';
import { sloTargetText } from '../../../shared/capacity.js';
import { levelSloStatus } from '../../../shared/slo-judge.js';
import { variantLabel } from '../../../shared/report-columns.js';
import type { XyChart, XySeries } from './xy-chart.js';
import { loadAxisLabel, loadKind, loadText, loadValue } from '../../../shared/level-load.js';
import { oneChunkNote, perUserTokPerSec } from '../../../shared/per-user-speed.js';

/** Levels per server configuration and kind of load: a burst, a rate and a concurrency are never one line. */
function groups(record: RunRecord): LevelResult[][] {
  const byConfig = new Map<string, LevelResult[]>();
  for (const l of record.levels) {
    const key = `${l.serverConfigIndex}|${loadKind(l)}`;
    const g = byConfig.get(key) ?? [];
    g.push(l);
    byConfig.set(key, g);
  }
  return [...byConfig.values()];
}

/** A level's x: its burst size, rate or concurrency (a burst's concurrency is only its in-flight cap). */
const loadOf = (l: LevelResult): number => loadValue(l);

function xAxis(record: RunRecord): { label: string; log: boolean; ticks?: number[] } {
  const kinds = new Set(record.levels.map(loadKind));
  const closed = kinds.size === 1 && kinds.has('concurrency');
  const xs = record.levels.map(loadOf);
  const lo = Math.min(...xs);
  const hi = Math.max(...xs);
  const distinct = [...new Set(xs)].sort((a, b) => a - b);
  return {
    label: loadAxisLabel(kinds),
    log: closed && lo > 0 && hi / lo >= 4,
    // The levels' own loads as ticks: no fractional concurrency on the axis.
    ticks: distinct.length <= 12 ? distinct : undefined,
  };
}

function seriesName(g: LevelResult[], gs: readonly LevelResult[][], what: string): string {
  const first = g[0];
  if (!first || gs.length <= 1) return what;
  const configs = new Set(gs.map((x) => x[0]?.serverConfigIndex)).size > 1;
  const kinds = new Set(gs.map((x) => (x[0] ? loadKind(x[0]) : ''))).size > 1;
  return [what, configs ? variantLabel(first, true) : '', kinds ? loadKind(first) : ''].filter(Boolean).join(' ');
}

/** Output tok/s against load, whiskers = lowest..highest complete round. */
export function throughputChart(record: RunRecord): XyChart {
  const gs = groups(record);
  const x = xAxis(record);
  const series: XySeries[] = gs.map((g, i) => ({
    name: seriesName(g, gs, 'output tok/s'),
    color: i,
    // A level cut short has no throughput: no point, rather than a made-up one.
    points: g.flatMap((l) => {
      if (l.outputTokPerSec === null) return [];
      const rounds = l.rounds.filter((r) => !r.partial).map((r) => r.outputTokPerSec);
      return {
        x: loadOf(l),
        y: l.outputTokPerSec,
        lo: rounds.length > 1 ? Math.min(...rounds) : null,
        hi: rounds.length > 1 ? Math.max(...rounds) : null,
      };
    }),
  }));
  return {
    id: 'chart-throughput',
    title: 'Throughput against load',
    xLabel: x.label,
    yLabel: 'output tok/s',
    series,
    logX: x.log,
    xTicks: x.ticks,
    note: 'Whiskers: the slowest and the fastest complete round of the level.',
  };
}

/** One latency's percentiles against load (the registry's quantity), whiskers = the 95 % confidence interval of p95/p99. */
export function latencyChart(record: RunRecord, quantity: QuantityId, title: string): XyChart {
  const pick = QUANTITIES[quantity].summary;
  const id = `chart-${quantity}`;
  const gs = groups(record);
  const x = xAxis(record);
  const many = gs.length > 1;
  const pcts: Array<{ key: 'p50' | 'p95' | 'p99'; ci?: 'p95Ci' | 'p99Ci' }> = many
    ? [{ key: 'p50' }, { key: 'p95', ci: 'p95Ci' }]
    : [{ key: 'p50' }, { key: 'p95', ci: 'p95Ci' }, { key: 'p99', ci: 'p99Ci' }];
  const series: XySeries[] = [];
  gs.forEach((g, gi) => {
    pcts.forEach((p, pi) => {
      series.push({
        name: seriesName(g, gs, p.key),
        color: many ? gi : pi,
        // p99 dashed: with few samples it often equals p95, and a dashed line lets both show.
        dashed: many ? pi > 0 : p.key === 'p99',
        points: g
          .filter((l) => pick(l)[p.key] !== null)
          .map((l) => {
            const s = pick(l);
            const ci = p.ci ? s[p.ci] : null;
            return { x: loadOf(l), y: s[p.key] as number, lo: ci?.[0] ?? null, hi: ci?.[1] ?? null };
          }),
      });
    });
  });
  return {
    id,
    title,
    xLabel: x.label,
    yLabel: 'ms',
    series,
    logX: x.log,
    xTicks: x.ticks,
    note: 'Whiskers: distribution-free 95 % confidence interval of p95 and p99 (absent where too few samples).',
  };
}

/**
 * The Pareto view: tokens per second one user sees (1000 / TPOT p50) against output tok/s of all users. With
 * percentile SLOs (--slo, the capacity search) each level is marked met / missed / uncertain and the capacity ringed.
 */
export function paretoChart(record: RunRecord): XyChart {
  const gs = groups(record);
  const status = levelSloStatus(record);
  const series: XySeries[] = gs.map((g, i) => ({
    name: seriesName(g, gs, 'per-user tok/s'),
    color: i,
    points: g
      .filter((l) => perUserTokPerSec(l) !== null && l.outputTokPerSec !== null)
      .map((l) => {
        const at = record.levels.indexOf(l);
        return {
          x: l.outputTokPerSec as number,
          y: perUserTokPerSec(l) as number,
          label: loadText(l, true),
          ...(status ? { slo: status.verdicts[at], capacity: status.capacityLevel === at } : {}),
        };
      }),
  }));
  const marks =
    [
      status
        ? `Marks: each level against ${status.targets.map(sloTargetText).join(', ')} (meets only when the percentile's 95 % interval lies within every limit).`
        : null,
      oneChunkNote(record.levels),
    ]
      .filter(Boolean)
      .join(' ') || undefined;
  // A TPOT SLO is a floor on per-user speed: shade where the points would meet it (the SLO bounds p95, points show p50).
  const tpotLimits = (capacitySearches(record)[0]?.targets ?? [])
    .filter((t) => t.metric === 'tpot')
    .map((t) => t.limitMs);
  const tpotLimit = tpotLimits.length > 0 ? Math.min(...tpotLimits) : record.config.slo?.tpotMs;
  return {
    id: 'chart-pareto',
    title: 'Latency against throughput (Pareto view)',
    xLabel: 'total output tok/s (all users)',
    yLabel: 'per-user tok/s (1000 / TPOT p50)',
    series,
    ...(tpotLimit
      ? {
          shadeAbove: {
            y: 1000 / tpotLimit,
            title: `TPOT SLO ${tpotLimit} ms: per-user tok/s ≥ ${Math.round(1000 / tpotLimit)}`,
          },
          note: [
            marks,
            `Shaded: per-user speed the TPOT SLO (${tpotLimit} ms) asks for; the SLO bounds p95, the points show p50.`,
          ]
            .filter(Boolean)
            .join(' '),
        }
      : marks
        ? { note: marks }
        : {}),
  };
}

/** Every chart of the report except the timeline, in order. */
export function levelCharts(record: RunRecord): XyChart[] {
  return [
    throughputChart(record),
    latencyChart(record, 'ttft', 'TTFT percentiles against load'),
    latencyChart(record, 'tpot', 'TPOT percentiles against load'),
    latencyChart(record, 'e2e', 'End-to-end latency percentiles against load'),
    paretoChart(record),
  ];
}
