import { BAND_FILLS, COLORS, GPU_COLORS } from './chart-colors.js';
import { loadText } from './level-load.js';
import type { LevelResult } from './run-record.js';
import type { ClientSample, EngineSample, GpuSample } from './telemetry.js';
import { THROTTLE_KIND_LABELS, recordedCeiling, throttleSpans } from './throttle-spans.js';
import type { ThrottleKind } from './throttle-spans.js';

// The one timeline of a run: the app draws it with uPlot and the HTML report embeds the same spec and draws it
// with the same library. Pure data (no DOM): x in seconds on the run's clock, one y list per series.

/** One series of a panel, aligned with the panel's x (null = no value there). */
interface TimelineSeries {
  label: string;
  color: string;
  unit: string;
  /** Points only (a scatter of requests) instead of a line. */
  points?: boolean;
}

/** A stretch of the time axis to shade: a level's measured window, or a GPU in one kind of slowdown. */
export interface TimelineBand {
  from: number;
  to: number;
  label: string;
  kind: 'window' | ThrottleKind;
  fill: string;
}

/** A dashed horizontal line at a GPU's own ceiling (its max SM clock, its power limit), kept in the y range. */
interface TimelineRefLine {
  y: number;
  label: string;
}

/** The panels a timeline may have, in the order they stack. */
type TimelinePanelId =
  | 'ttft'
  | 'e2e'
  | 'output-rate'
  | 'sm-clock'
  | 'temperature'
  | 'power'
  | 'gpu-util'
  | 'gpu-memory'
  | 'engine-queue'
  | 'kv-cache'
  | 'loop-lag';

/** One chart of the stack: its own y axis and unit. */
export interface TimelinePanel {
  id: TimelinePanelId;
  title: string;
  unit: string;
  /** The y axis starts at zero (latency, rates, shares); off for clocks, temperatures and power. */
  yZero: boolean;
  /** A request panel is drawn taller than a telemetry one. */
  tall: boolean;
  x: number[];
  ys: Array<Array<number | null>>;
  series: TimelineSeries[];
  refLines: TimelineRefLine[];
  /** Level windows on every panel; slowdown spans on the GPU panels too. */
  bands: TimelineBand[];
  /** Write the window labels at the panel's top (the first panel only). */
  bandLabels: boolean;
  /** What the panel says when it has no point. */
  empty: string;
}

/** A key to the shading, shown under the stack when such a span occurs. */
interface TimelineKey {
  kind: TimelineBand['kind'];
  fill: string;
  text: string;
}

/** The whole timeline: panels on one shared time range. */
export interface TimelineSpec {
  xLabel: string;
  /** [from, to] s shared by every panel; null when there is nothing on the clock. */
  range: [number, number] | null;
  panels: TimelinePanel[];
  keys: TimelineKey[];
  /** Why a part is absent (no GPU samples ...), one line each. */
  notes: string[];
}

/** What the timeline is built from: thinned request points and the run's telemetry, all on the run's clock. */
export interface TimelineInput {
  /** [end s, TTFT ms] and [end s, E2E ms] of measured requests (thinned, extremes kept). */
  ttft: ReadonlyArray<readonly [number, number]>;
  e2e: ReadonlyArray<readonly [number, number]>;
  /** [bin middle s, output tok/s] from the requests (OutputRate). */
  outputRate: ReadonlyArray<readonly [number, number]>;
  gpu: readonly GpuSample[];
  engine: readonly EngineSample[];
  client: readonly ClientSample[];
  levels: readonly LevelResult[];
  /** What the request panels say with no point. */
  requestsEmpty?: string;
  /** What the output-rate panel says with no point (the live view has no token counts yet). */
  outputRateEmpty?: string;
  /** Why there is no GPU sample (else a plain line). */
  gpuNote?: string;
}

/** The slowdown kinds' key text; throttling lowers the clock, a power cap is normal at full load. */
const KEY_TEXT: Readonly<Record<TimelineBand['kind'], string>> = {
  window: "each level's measured window (warm-up and cool-down left out)",
  thermal: 'thermal slowdown: the GPU lowered its clock to cool down (throttling)',
  'hw-slowdown': 'hardware slowdown: the GPU lowered its clock (throttling)',
  'power-cap': 'power cap: the GPU held its power limit; normal at full load, not throttling',
};

/** Aligns series given as [x, y] points onto one ascending x axis. */
export function alignSeries(series: ReadonlyArray<ReadonlyArray<readonly [number, number | null]>>): {
  x: number[];
  ys: Array<Array<number | null>>;
} {
  const xs = [...new Set(series.flatMap((s) => s.map(([x]) => x)))].sort((a, b) => a - b);
  const index = new Map(xs.map((x, i) => [x, i]));
  const ys = series.map((s) => {
    const y = new Array<number | null>(xs.length).fill(null);
    for (const [x, v] of s) y[index.get(x) ?? 0] = v;
    return y;
  });
  return { x: xs, ys };
}

/** Each level's measured window (its rounds, warm-up and cool-down left out), in seconds. */
export function levelWindows(levels: readonly LevelResult[]): TimelineBand[] {
  const out: TimelineBand[] = [];
  for (const level of levels) {
    if (level.rounds.length === 0) continue;
    const from = Math.min(...level.rounds.map((r) => r.startMs)) / 1000;
    const to = Math.max(...level.rounds.map((r) => r.endMs)) / 1000;
    if (!Number.isFinite(from) || !Number.isFinite(to) || to <= from) continue;
    const fill = BAND_FILLS.window[out.length % 2] as string;
    out.push({ from, to, label: loadText(level, true), kind: 'window', fill });
  }
  return out;
}

/** The GPUs' slowdown spans as bands, each kind its own colour (a power cap apart from throttling). */
export function slowdownBands(gpu: readonly GpuSample[]): TimelineBand[] {
  return throttleSpans(gpu).map((s) => ({
    from: s.startMs / 1000,
    to: s.endMs / 1000,
    label: THROTTLE_KIND_LABELS[s.kind],
    kind: s.kind,
    fill: BAND_FILLS[s.kind],
  }));
}

type GpuField = 'smClockMhz' | 'tempC' | 'powerW' | 'utilPct' | 'memUsedMiB';

/** One GPU field, a line per GPU; `scale` turns the recorded unit into the shown one. */
function gpuSeries(gpu: readonly GpuSample[], field: GpuField, name: string, unit: string, scale = 1) {
  const ids = [...new Set(gpu.map((s) => s.gpu))].sort((a, b) => a - b);
  const pts = ids.map((g) =>
    gpu
      .filter((s) => s.gpu === g)
      .map((s): [number, number | null] => {
        const v = s[field];
        return [s.tMs / 1000, typeof v === 'number' && Number.isFinite(v) ? v * scale : null];
      }),
  );
  const series = ids.map((g, i) => ({
    label: ids.length > 1 ? `${name} GPU ${g}` : name,
    color: GPU_COLORS[i % GPU_COLORS.length] ?? COLORS.blue,
    unit,
  }));
  const hasValue = pts.some((p) => p.some(([, v]) => v !== null));
  return { ...alignSeries(pts), series, hasValue };
}

interface PanelBase {
  id: TimelinePanelId;
  title: string;
  unit: string;
  yZero?: boolean;
  tall?: boolean;
  refLines?: TimelineRefLine[];
  empty?: string;
}

function panel(
  base: PanelBase,
  data: { x: number[]; ys: Array<Array<number | null>>; series: TimelineSeries[] },
  bands: TimelineBand[],
): TimelinePanel {
  return {
    yZero: true,
    tall: false,
    refLines: [],
    empty: 'no samples',
    ...base,
    ...data,
    bands,
    bandLabels: false,
  };
}

/** The GPU panels: SM clock (max-clock line), temperature, power (power-limit line), utilisation, memory used. */
function gpuPanels(gpu: readonly GpuSample[], bands: TimelineBand[]): TimelinePanel[] {
  const maxClock = recordedCeiling(gpu, 'maxSmClockMhz');
  const powerLimit = recordedCeiling(gpu, 'powerLimitW');
  const defs: Array<[PanelBase, GpuField, string, number]> = [
    [
      {
        id: 'sm-clock',
        title: 'GPU SM clock (MHz)',
        unit: 'MHz',
        yZero: false,
        refLines: maxClock === null ? [] : [{ y: maxClock, label: `max SM clock ${maxClock} MHz` }],
      },
      'smClockMhz',
      'SM clock',
      1,
    ],
    [{ id: 'temperature', title: 'GPU temperature (°C)', unit: '°C', yZero: false }, 'tempC', 'temperature', 1],
    [
      {
        id: 'power',
        title: 'GPU power (W)',
        unit: 'W',
        yZero: false,
        refLines: powerLimit === null ? [] : [{ y: powerLimit, label: `power limit ${powerLimit} W` }],
      },
      'powerW',
      'power',
      1,
    ],
    [{ id: 'gpu-util', title: 'GPU utilisation (%)', unit: '%' }, 'utilPct', 'utilisation', 1],
    [{ id: 'gpu-memory', title: 'GPU memory used (GiB)', unit: 'GiB' }, 'memUsedMiB', 'memory used', 1 / 1024],
  ];
  return defs.flatMap(([base, field, name, scale]) => {
    const { hasValue, ...data } = gpuSeries(gpu, field, name, base.unit, scale);
    // A field this driver never reported is left out rather than drawn empty (the clock, the first, always shows).
    return hasValue || base.id === 'sm-clock' ? [panel(base, data, bands)] : [];
  });
}

/** The engine's queue and KV cache, and the client's event-loop lag, each where it was reported. */
function enginePanels(engine: readonly EngineSample[], client: readonly ClientSample[], windows: TimelineBand[]) {
  const out: TimelinePanel[] = [];
  const t = (s: { tMs: number }): number => s.tMs / 1000;
  if (engine.some((s) => s.running !== null || s.waiting !== null)) {
    const data = alignSeries([
      engine.map((s): [number, number | null] => [t(s), s.running]),
      engine.map((s): [number, number | null] => [t(s), s.waiting]),
    ]);
    const series = [
      { label: 'running', color: COLORS.green, unit: 'req' },
      { label: 'waiting', color: COLORS.red, unit: 'req' },
    ];
    out.push(
      panel(
        { id: 'engine-queue', title: 'Engine requests running / waiting', unit: 'req' },
        { ...data, series },
        windows,
      ),
    );
  }
  if (engine.some((s) => s.kvUsage !== null)) {
    const data = alignSeries([
      engine.map((s): [number, number | null] => [t(s), s.kvUsage === null ? null : s.kvUsage * 100]),
    ]);
    const series = [{ label: 'KV cache', color: COLORS.violet, unit: '%' }];
    out.push(panel({ id: 'kv-cache', title: 'Engine KV-cache usage (%)', unit: '%' }, { ...data, series }, windows));
  }
  if (client.length > 0) {
    const data = alignSeries([client.map((s): [number, number | null] => [t(s), s.loopLagMs])]);
    const series = [{ label: 'event-loop lag', color: COLORS.teal, unit: 'ms' }];
    const base = { id: 'loop-lag' as const, title: 'Load generator event-loop lag (ms)', unit: 'ms' };
    out.push(panel(base, { ...data, series }, windows));
  }
  return out;
}

/** The [min, max] of every panel's x and the windows, so stacked panels share one time axis. */
function sharedSpan(panels: readonly TimelinePanel[], windows: readonly TimelineBand[]): [number, number] | null {
  let lo = Infinity;
  let hi = -Infinity;
  for (const p of panels) {
    if (p.x.length === 0) continue;
    lo = Math.min(lo, p.x[0] as number);
    hi = Math.max(hi, p.x[p.x.length - 1] as number);
  }
  for (const w of windows) {
    lo = Math.min(lo, w.from);
    hi = Math.max(hi, w.to);
  }
  if (!Number.isFinite(lo) || !Number.isFinite(hi)) return null;
  return [lo, hi > lo ? hi : lo + 1];
}

/** The request panels: TTFT and E2E each on its own axis (TTFT is often 100x smaller), and output tok/s. */
function requestPanels(input: TimelineInput, windows: TimelineBand[]): TimelinePanel[] {
  const empty = input.requestsEmpty ?? 'no measured request completed';
  const scatter = (pts: TimelineInput['ttft'], label: string, color: string) => ({
    ...alignSeries([pts]),
    series: [{ label, color, unit: 'ms', points: true }],
  });
  const rate = {
    ...alignSeries([input.outputRate]),
    series: [{ label: 'output tok/s', color: COLORS.green, unit: 'tok/s' }],
  };
  return [
    {
      ...panel(
        { id: 'ttft', title: 'TTFT per request (ms), at its end', unit: 'ms', tall: true, empty },
        scatter(input.ttft, 'TTFT', COLORS.blue),
        windows,
      ),
      bandLabels: true,
    },
    panel(
      { id: 'e2e', title: 'E2E latency per request (ms), at its end', unit: 'ms', tall: true, empty },
      scatter(input.e2e, 'E2E', COLORS.orange),
      windows,
    ),
    panel(
      {
        id: 'output-rate',
        title: 'Output tokens per second, all requests',
        unit: 'tok/s',
        empty: input.outputRateEmpty ?? empty,
      },
      rate,
      windows,
    ),
  ];
}

/** The timeline of a run (or of the run so far): every panel, its series, axes, units, colours and shading. */
export function timelineSpec(input: TimelineInput): TimelineSpec {
  const windows = levelWindows(input.levels);
  const slowdowns = slowdownBands(input.gpu);
  const gpuBands = [...windows, ...slowdowns];
  const hasGpu = input.gpu.length > 0;
  const panels = [
    ...requestPanels(input, windows),
    ...(hasGpu ? gpuPanels(input.gpu, gpuBands) : []),
    ...enginePanels(input.engine, input.client, windows),
  ];
  const kinds = new Set(gpuBands.map((b) => b.kind));
  const keys = (['window', 'thermal', 'hw-slowdown', 'power-cap'] as const)
    .filter((k) => kinds.has(k))
    .map((kind) => ({ kind, fill: kind === 'window' ? BAND_FILLS.window[1] : BAND_FILLS[kind], text: KEY_TEXT[kind] }));
  return {
    xLabel: 'seconds since the run started',
    range: sharedSpan(panels, windows),
    panels,
    keys,
    notes: hasGpu ? [] : [input.gpuNote ?? 'No GPU telemetry was recorded for this run.'],
  };
}
