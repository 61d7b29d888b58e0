import { QUANTITIES } from '../../shared/metrics.js';
import type { QuantityId } from '../../shared/metrics.js';
import type { LevelResult, RunRecord } from '../../shared/run-record.js';
import { sloTargetText } from '../../shared/capacity.js';
import { alignSeries } from '../../shared/timeline-spec.js';
import type { SloVerdict } from '../../shared/capacity.js';
import { levelSloStatus } from '../../shared/slo-judge.js';
import { lengthsText, loadAxisLabel, loadKind, loadText, loadValue } from '../../shared/level-load.js';
import { isPooling } from '../../shared/endpoint-kinds.js';
import { oneChunkNote, perUserTokPerSec } from '../../shared/per-user-speed.js';
import { COLORS, GPU_COLORS } from '../../shared/chart-colors.js';

/**
 * Plain chart data, independent of the app: the chart components (and the HTML report) draw these.
 * `x` ascends; each entry of `ys` is one series aligned with `x` (null = no value there).
 */
export interface ChartData {
  x: number[];
  ys: Array<Array<number | null>>;
  series: SeriesSpec[];
}

interface SeriesSpec {
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

export { COLORS } from '../../shared/chart-colors.js';

/** Aligns series given as [x, y] points onto one ascending x axis (the timeline spec's own). */
export const alignPoints = alignSeries;

/** The x of a level in sweep charts: its burst size, request rate (open loop) or concurrency. */
function levelX(level: LevelResult): number {
  return loadValue(level);
}

/** The sweep charts' x-axis label, naming the kind of load the levels ran ("burst size" for a one-instant trace). */
export function sweepXLabel(record: RunRecord): string {
  return loadAxisLabel(record.levels.map(loadKind));
}

/** Levels grouped by what else varies (server configuration, lengths, kind of load), in sweep order. */
function levelGroups(record: RunRecord): Array<{ label: string; levels: LevelResult[] }> {
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

/** A stretch of the time axis to shade, in seconds on the run's clock. */
export interface TimeBand {
  from: number;
  to: number;
  label: string;
  /** 'throttle': a GPU was slowed down (thermal, hardware), shaded red; 'power-cap': held at its power limit,
   * shaded neutral (not throttling); default a level's measured window. */
  tone?: 'throttle' | 'power-cap';
  /** The spec's own shading and kind (src/shared/timeline-spec.ts), where it set them. */
  fill?: string;
  kind?: string;
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
