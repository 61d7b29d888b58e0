import { QUANTITIES } from '../../shared/metrics.js';
import type { QuantityId } from '../../shared/metrics.js';
import { requestE2eMs, requestTtftMs } from '../../shared/request-record.js';
import type { RequestRecord } from '../../shared/request-record.js';
import type { LevelResult, RunRecord } from '../../shared/run-record.js';
import type { EngineSample, GpuSample } from '../../shared/telemetry.js';
import { sloTargetText } from '../../shared/capacity.js';
import { THROTTLE_KIND_LABELS, THROTTLING, throttleSpans } from '../../shared/throttle-spans.js';
import type { SloVerdict } from '../../shared/capacity.js';
import { levelSloStatus } from '../../shared/slo-judge.js';
import { lengthsText, loadAxisLabel, loadKind, loadText, loadValue } from '../../shared/level-load.js';
import { isPooling } from '../../shared/endpoint-kinds.js';
import { oneChunkNote, perUserTokPerSec } from '../../shared/per-user-speed.js';

/**
 * Plain chart data, independent of the app: the chart components (and the HTML report) draw these.
 * `x` ascends; each entry of `ys` is one series aligned with `x` (null = no value there).
 */
export interface ChartData {
  x: number[];
  ys: Array<Array<number | null>>;
  series: SeriesSpec[];
}

export interface SeriesSpec {
  label: string;
  color: string;
  /** Points only (a scatter) instead of a line. */
  points?: boolean;
  dash?: number[];
  /** Unit shown in the legend, e.g. "ms". */
  unit?: string;
  /** Points drawn as rings (a level that misses an SLO), and their size in px. */
  hollow?: boolean;
  size?: number;
}

export const COLORS = {
  blue: '#2563eb',
  sky: '#0ea5e9',
  orange: '#ea580c',
  amber: '#d97706',
  red: '#dc2626',
  green: '#16a34a',
  violet: '#7c3aed',
  gray: '#6b7280',
} as const;
const GPU_COLORS = ['#2563eb', '#ea580c', '#16a34a', '#7c3aed', '#db2777', '#0891b2', '#65a30d', '#9333ea'];

/** Aligns series given as [x, y] points onto one ascending x axis. */
export function alignPoints(series: Array<Array<[number, number | null]>>): {
  x: number[];
  ys: Array<Array<number | null>>;
} {
  const xs = [...new Set(series.flatMap((s) => s.map(([x]) => x)))].sort((a, b) => a - b);
  const index = new Map(xs.map((x, i) => [x, i]));
  const ys = series.map((s) => {
    const y: Array<number | null> = new Array<number | null>(xs.length).fill(null);
    for (const [x, v] of s) y[index.get(x) ?? 0] = v;
    return y;
  });
  return { x: xs, ys };
}

/** The x of a level in sweep charts: its burst size, request rate (open loop) or concurrency. */
export function levelX(level: LevelResult): number {
  return loadValue(level);
}

/** The sweep charts' x-axis label, naming the kind of load the levels ran ("burst size" for a one-instant trace). */
export function sweepXLabel(record: RunRecord): string {
  return loadAxisLabel(record.levels.map(loadKind));
}

/** Levels grouped by what else varies (server configuration, lengths, kind of load), in sweep order. */
export function levelGroups(record: RunRecord): Array<{ label: string; levels: LevelResult[] }> {
  const groups = new Map<string, LevelResult[]>();
  for (const level of record.levels) {
    // A burst, a rate and a concurrency are different x scales: never one line through them.
    const key = `${level.serverConfigIndex}|${level.inputLen}|${level.outputLen}|${loadKind(level)}`;
    groups.set(key, [...(groups.get(key) ?? []), level]);
  }
  const many = groups.size > 1;
  const mixed = new Set(record.levels.map(loadKind)).size > 1;
  return [...groups.values()].map((levels) => {
    const l = levels[0] as LevelResult;
    const variant = l.serverVariant
      ? Object.entries(l.serverVariant)
          .map(([k, v]) => `${k}=${String(v)}`)
          .join(' ')
      : '';
    const label = many
      ? [
          variant,
          isPooling(l.endpoint) ? lengthsText(l, true) : `in ${l.inputLen}/out ${l.outputLen}`,
          mixed ? loadKind(l) : '',
        ]
          .filter(Boolean)
          .join(' ')
      : '';
    return { label, levels };
  });
}

const withGroup = (name: string, group: string): string => (group ? `${name} (${group})` : name);

/** Output throughput against the load (concurrency, rate or burst size). */
export function throughputChart(record: RunRecord): ChartData {
  const groups = levelGroups(record);
  const series: SeriesSpec[] = [];
  const pts: Array<Array<[number, number | null]>> = [];
  groups.forEach((g, i) => {
    series.push({
      label: withGroup('output tok/s', g.label),
      color: GPU_COLORS[i % GPU_COLORS.length] ?? COLORS.blue,
      unit: 'tok/s',
    });
    pts.push(g.levels.map((l) => [levelX(l), l.outputTokPerSec]));
  });
  return { ...alignPoints(pts), series };
}

/** p50 and p95 of one latency (the registry's quantity) against the load (concurrency, rate or burst size). */
export function percentileChart(record: RunRecord, quantity: QuantityId): ChartData {
  const { summary: pick, label: name } = QUANTITIES[quantity];
  const groups = levelGroups(record);
  const series: SeriesSpec[] = [];
  const pts: Array<Array<[number, number | null]>> = [];
  groups.forEach((g, i) => {
    const color = GPU_COLORS[i % GPU_COLORS.length] ?? COLORS.blue;
    series.push({ label: withGroup(`${name} p50`, g.label), color, unit: 'ms' });
    pts.push(g.levels.map((l) => [levelX(l), pick(l).p50]));
    // One setup: p95 gets its own colour; several: each setup keeps its colour, p95 dashed.
    const p95Color = groups.length === 1 ? COLORS.orange : color;
    series.push({ label: withGroup(`${name} p95`, g.label), color: p95Color, dash: [6, 4], unit: 'ms' });
    pts.push(g.levels.map((l) => [levelX(l), pick(l).p95]));
  });
  return { ...alignPoints(pts), series };
}

/** TTFT and E2E of every measured request at the moment it ended (seconds on the run's clock). */
export function requestLatencyChart(requests: RequestRecord[]): ChartData {
  const measured = requests.filter((r) => !r.warmup && r.ok && r.endMs !== null);
  const ttft: Array<[number, number | null]> = [];
  const e2e: Array<[number, number | null]> = [];
  for (const r of measured) {
    const t = (r.endMs as number) / 1000;
    ttft.push([t, requestTtftMs(r)]);
    e2e.push([t, requestE2eMs(r)]);
  }
  return latencyData(ttft, e2e);
}

/** The same chart from live points: [time s, ttft ms, e2e ms]. */
export function latencyData(ttft: Array<[number, number | null]>, e2e: Array<[number, number | null]>): ChartData {
  return {
    ...alignPoints([ttft, e2e]),
    series: [
      { label: 'TTFT', color: COLORS.blue, points: true, unit: 'ms' },
      { label: 'E2E', color: COLORS.orange, points: true, unit: 'ms' },
    ],
  };
}

export type GpuField = 'smClockMhz' | 'tempC' | 'powerW';

/** One telemetry field over the run's time (seconds), one series per GPU. */
export function gpuChart(samples: GpuSample[], field: GpuField, name: string, unit: string): ChartData {
  const gpus = [...new Set(samples.map((s) => s.gpu))].sort((a, b) => a - b);
  const pts = gpus.map((g) =>
    samples.filter((s) => s.gpu === g).map((s): [number, number | null] => [s.tMs / 1000, s[field]]),
  );
  return {
    ...alignPoints(pts),
    series: gpus.map((g, i) => ({
      label: gpus.length > 1 ? `${name} GPU ${g}` : name,
      color: GPU_COLORS[i % GPU_COLORS.length] ?? COLORS.blue,
      unit,
    })),
  };
}

/** Engine queue over the run's time (seconds): requests running and waiting; null when the engine gave neither. */
export function engineQueueChart(samples: EngineSample[]): ChartData | null {
  if (!samples.some((s) => s.running !== null || s.waiting !== null)) return null;
  return {
    ...alignPoints([
      samples.map((s): [number, number | null] => [s.tMs / 1000, s.running]),
      samples.map((s): [number, number | null] => [s.tMs / 1000, s.waiting]),
    ]),
    series: [
      { label: 'running', color: COLORS.green, unit: 'req' },
      { label: 'waiting', color: COLORS.red, unit: 'req' },
    ],
  };
}

/** KV-cache usage (%) over the run's time (seconds); null when the engine did not report it. */
export function kvUsageChart(samples: EngineSample[]): ChartData | null {
  if (!samples.some((s) => s.kvUsage !== null)) return null;
  return {
    ...alignPoints([
      samples.map((s): [number, number | null] => [s.tMs / 1000, s.kvUsage === null ? null : s.kvUsage * 100]),
    ]),
    series: [{ label: 'KV cache', color: COLORS.violet, unit: '%' }],
  };
}

/** A stretch of the time axis to shade, in seconds on the run's clock. */
export interface TimeBand {
  from: number;
  to: number;
  label: string;
  /** 'throttle': a GPU was slowed down (thermal, hardware), shaded red; 'power-cap': held at its power limit,
   * shaded neutral (not throttling); default a level's measured window. */
  tone?: 'throttle' | 'power-cap';
}

/** The GPU's slowdown spans as bands: throttling red, a power cap apart in a neutral tone (src/shared/throttle-spans.ts). */
export function throttleBands(samples: readonly GpuSample[]): TimeBand[] {
  return throttleSpans(samples).map((s) => ({
    from: s.startMs / 1000,
    to: s.endMs / 1000,
    label: THROTTLE_KIND_LABELS[s.kind],
    tone: THROTTLING[s.kind] ? 'throttle' : 'power-cap',
  }));
}

/** Each level's measured window (its rounds, warm-up and cool-down left out), in seconds on the run's clock. */
export function measuredWindows(levels: LevelResult[]): TimeBand[] {
  const out: TimeBand[] = [];
  for (const level of levels) {
    if (level.rounds.length === 0) continue;
    const from = Math.min(...level.rounds.map((r) => r.startMs)) / 1000;
    const to = Math.max(...level.rounds.map((r) => r.endMs)) / 1000;
    if (!Number.isFinite(from) || !Number.isFinite(to) || to <= from) continue;
    out.push({ from, to, label: loadText(level, true) });
  }
  return out;
}

/** The span [min, max] of several charts' x, so stacked charts share one time axis. */
export function sharedRange(charts: ChartData[]): [number, number] | null {
  let lo = Infinity;
  let hi = -Infinity;
  for (const c of charts) {
    if (c.x.length === 0) continue;
    lo = Math.min(lo, c.x[0] as number);
    hi = Math.max(hi, c.x[c.x.length - 1] as number);
  }
  if (!Number.isFinite(lo) || !Number.isFinite(hi)) return null;
  return [lo, hi > lo ? hi : lo + 1];
}

/** The Pareto view of a run: the chart, the per-user floor a TPOT SLO sets, the capacity to label, a note. */
export interface ParetoView {
  data: ChartData;
  /** Per-user tok/s a TPOT SLO asks for (1000 / its tightest limit): shaded above. */
  floor: { y: number; label: string } | null;
  /** The capacity level the search found, ringed and labelled. */
  capacity: { x: number; y: number; label: string } | null;
  note: string | null;
}

const SLO_MARKS: ReadonlyArray<{ verdict: SloVerdict; label: string; color: string; hollow: boolean }> = [
  { verdict: 'meets', label: 'meets every SLO', color: COLORS.green, hollow: false },
  { verdict: 'fails', label: 'misses an SLO', color: COLORS.red, hollow: true },
  { verdict: 'uncertain', label: 'uncertain', color: COLORS.amber, hollow: true },
];

const levelName = (l: LevelResult): string => loadText(l, true);

/**
 * Per-user tok/s (1000 / TPOT p50) against output tok/s of all users, a line per setup. With percentile SLOs
 * (--slo, the capacity search) each level is marked met / missed / uncertain, and the capacity is labelled.
 */
export function paretoChart(record: RunRecord): ParetoView {
  const at = (l: LevelResult): [number, number] | null => {
    const perUser = perUserTokPerSec(l);
    return perUser !== null && l.outputTokPerSec !== null ? [l.outputTokPerSec, perUser] : null;
  };
  const groups = levelGroups(record);
  const series: SeriesSpec[] = [];
  const pts: Array<Array<[number, number | null]>> = [];
  groups.forEach((g, i) => {
    series.push({
      label: withGroup('per-user tok/s', g.label),
      color: GPU_COLORS[i % GPU_COLORS.length] ?? COLORS.blue,
      unit: 'tok/s',
    });
    pts.push(g.levels.map(at).filter((p): p is [number, number] => p !== null));
  });
  const status = levelSloStatus(record);
  if (status) {
    for (const mark of SLO_MARKS) {
      const mine = record.levels
        .map((l, i) => (status.verdicts[i] === mark.verdict ? at(l) : null))
        .filter((p): p is [number, number] => p !== null);
      if (mine.length === 0) continue;
      series.push({ label: mark.label, color: mark.color, points: true, hollow: mark.hollow, size: 9, unit: 'tok/s' });
      pts.push(mine);
    }
  }
  const capLevel = status?.capacityLevel !== null && status ? record.levels[status.capacityLevel] : undefined;
  const capAt = capLevel ? at(capLevel) : null;
  const tpotLimits = (status?.targets ?? []).filter((t) => t.metric === 'tpot').map((t) => t.limitMs);
  const tpotLimit = tpotLimits.length > 0 ? Math.min(...tpotLimits) : record.config.slo?.tpotMs;
  const notes = [
    status
      ? `Marks: each level against ${status.targets.map(sloTargetText).join(', ')} (met only when the percentile's 95 % interval lies within every limit).`
      : null,
    tpotLimit
      ? `Shaded: per-user speed the TPOT SLO (${tpotLimit} ms) asks for; the SLO bounds p95, the line shows p50.`
      : null,
    oneChunkNote(record.levels),
  ].filter((n): n is string => n !== null);
  return {
    data: { ...alignPoints(pts), series },
    floor: tpotLimit ? { y: 1000 / tpotLimit, label: `TPOT SLO ${tpotLimit} ms` } : null,
    capacity: capLevel && capAt ? { x: capAt[0], y: capAt[1], label: `${levelName(capLevel)} capacity` } : null,
    note: notes.length > 0 ? notes.join(' ') : null,
  };
}

/**
 * The points of a scatter worth drawing at the chart's size: one per occupied pixel (x px, y px) of the visible
 * index range i0..i1, and each pixel column's lowest and highest value exactly, so every pixel that would be
 * painted still is and no extreme is lost. toPx / toPy map values to (CSS) pixels; null y values are skipped.
 */
export function pixelPoints(
  xs: ArrayLike<number>,
  ys: ArrayLike<number | null | undefined>,
  i0: number,
  i1: number,
  toPx: (x: number) => number,
  toPy: (y: number) => number,
): number[] {
  const out: number[] = [];
  const cells = new Set<number>();
  const lo = new Map<number, number>();
  const hi = new Map<number, number>();
  const kept = new Uint8Array(Math.max(0, i1 - i0 + 1));
  for (let i = i0; i <= i1; i++) {
    const y = ys[i];
    if (y === null || y === undefined) continue;
    const px = Math.round(toPx(xs[i] as number));
    const py = Math.round(toPy(y));
    const key = px * 1_000_003 + py;
    if (!cells.has(key)) {
      cells.add(key);
      kept[i - i0] = 1;
      out.push(i);
    }
    const l = lo.get(px);
    if (l === undefined || y < (ys[l] as number)) lo.set(px, i);
    const h = hi.get(px);
    if (h === undefined || y > (ys[h] as number)) hi.set(px, i);
  }
  for (const i of [...lo.values(), ...hi.values()])
    if (!kept[i - i0]) {
      kept[i - i0] = 1;
      out.push(i);
    }
  return out;
}
