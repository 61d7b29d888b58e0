import type { EngineTtftParts, LevelTelemetry, TelemetryIssue } from '../../shared/run-record.js';
import type { EngineSample, GpuSample } from '../../shared/telemetry.js';
import { medianSpacingMs } from './power-curve.js';
import { telemetryFieldName } from './sample-bounds.js';
import { clockRatio } from './throttle.js';
import type { GpuProcessSnapshot } from './types.js';

/** Everything summarizeTelemetry needs: all samples (not only the window: energy interpolates at its edges). */
export interface SummarizeInput {
  source: LevelTelemetry['source'];
  reason?: string;
  gpuSamples: readonly GpuSample[];
  engineSamples: readonly EngineSample[];
  processSnapshots?: readonly GpuProcessSnapshot[];
  fromMs: number;
  toMs: number;
  outputTokens: number;
  /** Sources dropped during the run (a flood, a hang), each from its moment on. */
  sourceIssues?: ReadonlyArray<TelemetryIssue & { tMs: number }>;
}

const inWindow = (t: number, from: number, to: number) => t >= from && t <= to;

function mean(values: number[]): number | null {
  return values.length ? values.reduce((a, b) => a + b, 0) / values.length : null;
}
function minOf(values: number[]): number | null {
  return values.length ? Math.min(...values) : null;
}
function maxOf(values: number[]): number | null {
  return values.length ? Math.max(...values) : null;
}
function present<T>(values: Array<T | null>): T[] {
  return values.filter((v): v is T => v !== null);
}

/**
 * Energy in joules one GPU drew over [from, to]: trapezoid over its power readings, interpolated
 * at the window's edges; where no reading lies beyond an edge, the nearest one is held for at most
 * one sample spacing. Null when there is no power reading near the window.
 */
export function integratePowerJ(samples: readonly GpuSample[], fromMs: number, toMs: number): number | null {
  const pts = samples
    .filter((s) => s.powerW !== null)
    .map((s) => ({ t: s.tMs, p: s.powerW as number }))
    .sort((a, b) => a.t - b.t);
  if (!pts.length || toMs <= fromMs) return null;
  const spacing = medianSpacingMs(pts.map((p) => p.t));
  let energy = 0;
  let covered = false;
  for (let i = 0; i + 1 < pts.length; i++) {
    const a = pts[i] as { t: number; p: number };
    const b = pts[i + 1] as { t: number; p: number };
    const lo = Math.max(a.t, fromMs);
    const hi = Math.min(b.t, toMs);
    if (hi <= lo || b.t <= a.t) continue;
    const at = (t: number) => a.p + ((b.p - a.p) * (t - a.t)) / (b.t - a.t);
    energy += ((at(lo) + at(hi)) / 2) * (hi - lo);
    covered = true;
  }
  const first = pts[0] as { t: number; p: number };
  const last = pts[pts.length - 1] as { t: number; p: number };
  if (first.t > fromMs && first.t <= toMs) {
    energy += first.p * Math.min(first.t - fromMs, spacing);
    covered = true;
  }
  if (last.t < toMs && last.t >= fromMs) {
    energy += last.p * Math.min(toMs - last.t, spacing);
    covered = true;
  }
  return covered ? energy / 1000 : null;
}

/** Increase of a monotonic counter over [from, to], from the last reading at or before `from`; a reset counts from 0. */
export function counterDelta(
  samples: ReadonlyArray<{ tMs: number; value: number | null }>,
  fromMs: number,
  toMs: number,
): number | null {
  const pts = samples
    .filter((s): s is { tMs: number; value: number } => s.value !== null)
    .sort((a, b) => a.tMs - b.tMs);
  let start = -1;
  for (let i = 0; i < pts.length; i++) if ((pts[i]?.tMs ?? Infinity) <= fromMs) start = i;
  if (start < 0) start = pts.findIndex((p) => p.tMs >= fromMs);
  if (start < 0) return null;
  let end = start;
  for (let i = start; i < pts.length; i++) if ((pts[i]?.tMs ?? Infinity) <= toMs) end = i;
  let delta = 0;
  for (let i = start + 1; i <= end; i++) {
    const prev = pts[i - 1]?.value ?? 0;
    const cur = pts[i]?.value ?? 0;
    delta += cur >= prev ? cur - prev : cur;
  }
  return delta;
}

/** Distinct other processes seen holding GPU memory during [from, to] (and in the snapshot just before). */
export function processesInWindow(snapshots: readonly GpuProcessSnapshot[], fromMs: number, toMs: number): string[] {
  const sorted = [...snapshots].sort((a, b) => a.tMs - b.tMs);
  const before = sorted.filter((s) => s.tMs <= fromMs).at(-1);
  const relevant = [...(before ? [before] : []), ...sorted.filter((s) => s.tMs > fromMs && s.tMs <= toMs)];
  const seen = new Map<number, string>();
  for (const snap of relevant) {
    for (const p of snap.processes) {
      seen.set(p.pid, `${p.pid} ${p.name}${p.usedMemoryMiB === null ? '' : ` (${p.usedMemoryMiB} MiB)`}`);
    }
  }
  return [...seen.values()];
}

/**
 * The engine's mean decode time per request (ms) over the requests its histogram counted between the first and the
 * last scrape inside [from, to], and how many; null with fewer than two such scrapes, no request counted between
 * them, or a reset counter. Only scrapes inside the window: one before it would count the previous level's requests.
 */
export function engineDecodeMean(
  samples: readonly EngineSample[],
  fromMs: number,
  toMs: number,
): { meanMs: number; requests: number } | null {
  const inside = samples
    .filter((s) => inWindow(s.tMs, fromMs, toMs) && typeof s.requestDecodeSecondsSum === 'number')
    .sort((a, b) => a.tMs - b.tMs);
  if (inside.length < 2) return null;
  const first = inside[0]!;
  const last = inside[inside.length - 1]!;
  const requests = (last.requestDecodeCount ?? 0) - (first.requestDecodeCount ?? 0);
  const seconds = last.requestDecodeSecondsSum! - first.requestDecodeSecondsSum!;
  if (!(requests > 0) || !(seconds >= 0)) return null;
  return { meanMs: (seconds * 1000) / requests, requests };
}

type HistogramField = 'requestQueueSecondsSum' | 'requestPrefillSecondsSum' | 'ttftSecondsSum';
type CountField = 'requestQueueCount' | 'requestPrefillCount' | 'ttftCount';

/** One histogram's mean (ms) between two samples, or null where either lacks it, none counted or a counter reset. */
function histogramMeanMs(
  first: EngineSample,
  last: EngineSample,
  sum: HistogramField,
  count: CountField,
): number | null {
  const s0 = first[sum];
  const s1 = last[sum];
  const n = (last[count] ?? 0) - (first[count] ?? 0);
  if (typeof s0 !== 'number' || typeof s1 !== 'number' || !(n > 0) || !(s1 - s0 >= 0)) return null;
  return ((s1 - s0) * 1000) / n;
}

/**
 * The engine's mean queue, prefill and TTFT (ms) over the requests its histograms counted between the first and the
 * last scrape inside [from, to] that carries any of them; null with fewer than two such scrapes or none counted.
 */
function engineTtftParts(samples: readonly EngineSample[], fromMs: number, toMs: number): EngineTtftParts | null {
  const inside = samples
    .filter(
      (s) =>
        inWindow(s.tMs, fromMs, toMs) &&
        (typeof s.requestQueueSecondsSum === 'number' || typeof s.ttftSecondsSum === 'number'),
    )
    .sort((a, b) => a.tMs - b.tMs);
  if (inside.length < 2) return null;
  const first = inside[0]!;
  const last = inside[inside.length - 1]!;
  const requests = Math.max(
    (last.requestQueueCount ?? 0) - (first.requestQueueCount ?? 0),
    (last.ttftCount ?? 0) - (first.ttftCount ?? 0),
  );
  const parts = {
    queueMeanMs: histogramMeanMs(first, last, 'requestQueueSecondsSum', 'requestQueueCount'),
    prefillMeanMs: histogramMeanMs(first, last, 'requestPrefillSecondsSum', 'requestPrefillCount'),
    ttftMeanMs: histogramMeanMs(first, last, 'ttftSecondsSum', 'ttftCount'),
  };
  if (!(requests > 0) || Object.values(parts).every((v) => v === null)) return null;
  return { fromMs: first.tMs, toMs: last.tMs, requests, ...parts };
}

/** Impossible values among some samples, one issue per field: how many samples had one, and the first as read. */
function valueIssues(
  source: TelemetryIssue['source'],
  sourceName: string,
  samples: ReadonlyArray<{ rejected?: Record<string, string> }>,
): TelemetryIssue[] {
  const byField = new Map<string, { count: number; example: string }>();
  for (const s of samples) {
    for (const [field, example] of Object.entries(s.rejected ?? {})) {
      const seen = byField.get(field);
      if (seen) seen.count++;
      else byField.set(field, { count: 1, example });
    }
  }
  return [...byField.entries()].map(([field, { count, example }]) => ({
    source,
    code: 'impossible-value',
    field,
    count,
    example,
    detail: impossibleValueText(
      source,
      sourceName,
      field,
      example,
      `in ${count} sample${count === 1 ? '' : 's'}: left out`,
    ),
  }));
}

/** "GPU telemetry (nvidia-smi) reported an impossible temperature.gpu (-273 °C) in 3 samples: left out". */
export function impossibleValueText(
  source: TelemetryIssue['source'],
  sourceName: string,
  field: string,
  example: string,
  tail: string,
): string {
  return `${sourceName} reported an impossible ${telemetryFieldName(source, field)} (${example}) ${tail}`;
}

/** The LevelTelemetry of one measured window (warm-up excluded): clocks, temperature, power, energy, throttle shares, engine peaks. */
export function summarizeTelemetry(input: SummarizeInput): LevelTelemetry {
  const { fromMs, toMs } = input;
  const engine = input.engineSamples.filter((s) => inWindow(s.tMs, fromMs, toMs));
  const engineAll = [...input.engineSamples].sort((a, b) => a.tMs - b.tMs);
  const engineFields = {
    kvUsagePeak: maxOf(present(engine.map((s) => s.kvUsage))),
    waitingPeak: maxOf(present(engine.map((s) => s.waiting))),
    runningPeak: maxOf(present(engine.map((s) => s.running))),
    preemptions: counterDelta(
      engineAll.map((s) => ({ tMs: s.tMs, value: s.preemptionsTotal })),
      fromMs,
      toMs,
    ),
    prefixCacheHits: counterDelta(
      engineAll.map((s) => ({ tMs: s.tMs, value: s.prefixCacheHitsTotal })),
      fromMs,
      toMs,
    ),
  };
  // The hit rate only where the engine counts lookups too (vLLM's queries, SGLang's prompt tokens).
  const queries = engineAll.some((s) => typeof s.prefixCacheQueriesTotal === 'number')
    ? counterDelta(
        engineAll.map((s) => ({ tMs: s.tMs, value: s.prefixCacheQueriesTotal ?? null })),
        fromMs,
        toMs,
      )
    : null;
  const hitRate =
    queries !== null && queries > 0 && engineFields.prefixCacheHits !== null
      ? Math.min(1, engineFields.prefixCacheHits / queries)
      : null;
  const cacheFields = queries !== null ? { prefixCacheQueries: queries, prefixCacheHitRate: hitRate } : {};
  const decode = engineDecodeMean(input.engineSamples, fromMs, toMs);
  const decodeFields = decode ? { engineDecodeMeanMs: decode.meanMs, engineDecodeRequests: decode.requests } : {};
  const ttftParts = engineTtftParts(input.engineSamples, fromMs, toMs);
  const others = input.processSnapshots ? processesInWindow(input.processSnapshots, fromMs, toMs) : undefined;
  const issues = [
    ...valueIssues(
      'gpu',
      `GPU telemetry (${input.source})`,
      input.gpuSamples.filter((s) => inWindow(s.tMs, fromMs, toMs)),
    ),
    ...valueIssues('engine', 'engine /metrics', engine),
    ...(input.sourceIssues ?? []).filter((i) => i.tMs <= toMs).map(({ tMs: _t, ...issue }) => issue),
  ];
  const gpu = input.source === 'unavailable' ? [] : input.gpuSamples.filter((s) => inWindow(s.tMs, fromMs, toMs));
  const n = gpu.length;
  const share = (cls: string) => (n ? gpu.filter((s) => s.class === cls).length / n : null);
  const ratios = present(gpu.map(clockRatio));
  const clocks = present(gpu.map((s) => s.smClockMhz));

  const byGpu = new Map<number, GpuSample[]>();
  for (const s of input.source === 'unavailable' ? [] : input.gpuSamples) {
    byGpu.set(s.gpu, [...(byGpu.get(s.gpu) ?? []), s]);
  }
  let energy: number | null = null;
  let power: number | null = null;
  for (const [, samples] of byGpu) {
    const e = integratePowerJ(samples, fromMs, toMs);
    if (e !== null) energy = (energy ?? 0) + e;
    const p = mean(present(samples.filter((s) => inWindow(s.tMs, fromMs, toMs)).map((s) => s.powerW)));
    if (p !== null) power = (power ?? 0) + p;
  }
  return {
    source: input.source,
    ...(input.reason ? { reason: input.reason } : {}),
    samples: n,
    smClockMeanMhz: mean(clocks),
    smClockMinMhz: minOf(clocks),
    clockRatioMean: mean(ratios),
    clockRatioMin: minOf(ratios),
    tempMaxC: maxOf(present(gpu.map((s) => s.tempC))),
    powerMeanW: power,
    energyJ: energy,
    jPerOutputTok: energy !== null && input.outputTokens > 0 ? energy / input.outputTokens : null,
    throttle: {
      thermalFraction: share('thermal'),
      hwSlowdownFraction: share('hw-slowdown'),
      powerCapFraction: share('power-cap'),
      idleFraction: share('idle'),
      unknownFraction: share('unknown'),
    },
    ...engineFields,
    ...cacheFields,
    ...decodeFields,
    ...(ttftParts ? { engineTtftParts: ttftParts } : {}),
    ...(others ? { otherGpuProcesses: others } : {}),
    ...(issues.length > 0 ? { issues } : {}),
  };
}
