import type { XyChart, XySeries } from '../html/xy-chart.js';
import type { CompareSeries, FigureKey, LevelLoad } from './types.js';
import { loadAxisLabel } from '../../../shared/level-load.js';

function axis(kind: LevelLoad['kind'], xs: number[]): { label: string; log: boolean; ticks?: number[] } {
  const lo = Math.min(...xs);
  const hi = Math.max(...xs);
  const distinct = [...new Set(xs)].sort((a, b) => a - b);
  return {
    label: loadAxisLabel([kind]),
    log: kind === 'concurrency' && lo > 0 && hi / lo >= 4,
    ticks: distinct.length <= 12 ? distinct : undefined,
  };
}

function overlay(
  series: readonly CompareSeries[],
  kind: LevelLoad['kind'],
  id: string,
  title: string,
  yLabel: string,
  keys: Array<{ key: FigureKey; name: string; dashed?: boolean }>,
): XyChart {
  const xs = series.flatMap((s) => s.levels.filter((l) => l.load.kind === kind).map((l) => l.load.value));
  const x = axis(kind, xs);
  const out: XySeries[] = [];
  series.forEach((s, i) => {
    for (const k of keys) {
      // Another tool's own quantity is no point on servebench's axis (the tables show it under its own name).
      if (s.definitions?.[k.key]?.match === 'differs') continue;
      out.push({
        name: keys.length > 1 ? `${s.label} ${k.name}` : s.label,
        color: i,
        dashed: k.dashed,
        points: s.levels
          .filter((l) => l.load.kind === kind && l.figures[k.key] !== null)
          .sort((a, b) => a.load.value - b.load.value)
          .map((l) => ({ x: l.load.value, y: l.figures[k.key] as number })),
      });
    }
  });
  // Sub-millisecond figures (TPOT of a model that streams whole blocks) read better in µs, with short ticks.
  const ys = out.flatMap((s) => s.points.map((p) => p.y));
  if (yLabel === 'ms' && ys.length > 0 && Math.max(...ys) < 1) {
    for (const s of out) s.points = s.points.map((p) => ({ ...p, y: p.y * 1000 }));
    yLabel = 'µs';
  }
  return { id: `${id}-${kind}`, title, xLabel: x.label, yLabel, series: out, logX: x.log, xTicks: x.ticks };
}

/** Overlaid throughput and latency-against-load charts, one colour per series, per kind of load present. */
export function compareCharts(series: readonly CompareSeries[]): XyChart[] {
  const kinds = [...new Set(series.flatMap((s) => s.levels.map((l) => l.load.kind)))].sort();
  return kinds.flatMap((kind) => [
    overlay(series, kind, 'cmp-throughput', 'Output throughput against load', 'output tok/s', [
      { key: 'throughput', name: 'tok/s' },
    ]),
    overlay(series, kind, 'cmp-ttft', 'TTFT against load (p50 solid, p95 dashed)', 'ms', [
      { key: 'ttftP50', name: 'p50' },
      { key: 'ttftP95', name: 'p95', dashed: true },
    ]),
    overlay(series, kind, 'cmp-tpot', 'TPOT against load (p50 solid, p95 dashed)', 'ms', [
      { key: 'tpotP50', name: 'p50' },
      { key: 'tpotP95', name: 'p95', dashed: true },
    ]),
    overlay(series, kind, 'cmp-e2e', 'End-to-end latency against load (p50 solid, p95 dashed)', 'ms', [
      { key: 'e2eP50', name: 'p50' },
      { key: 'e2eP95', name: 'p95', dashed: true },
    ]),
  ]);
}
