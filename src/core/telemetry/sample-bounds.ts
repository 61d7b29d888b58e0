import type { EngineSample, GpuSample } from '../../shared/telemetry.js';
import { classifyThrottle } from './throttle.js';

/** A numeric field's physically possible range (inclusive) and how people know it (nvidia-smi's name, a unit). */
interface Bound {
  name: string;
  unit: string;
  min: number;
  max: number;
}

type GpuNumberField = Exclude<keyof GpuSample, 'tMs' | 'gpu' | 'node' | 'nodeGpu' | 'pstate' | 'class' | 'rejected'>;
type EngineField = Exclude<keyof EngineSample, 'tMs' | 'rejected'>;

/** Every clock-event reason NVML defines (nvmlClocksEventReasonAll, 0x1 .. 0x100): a mask beyond is no reading. */
const KNOWN_THROTTLE_BITS = 0x1ff;

/** What a GPU can report: no card runs below -40 °C or above 150 °C, past 10 GHz, 5 kW or 10 TiB of memory. */
const GPU_BOUNDS: Record<GpuNumberField, Bound> = {
  smClockMhz: { name: 'clocks.sm', unit: ' MHz', min: 0, max: 10_000 },
  maxSmClockMhz: { name: 'clocks.max.sm', unit: ' MHz', min: 1, max: 10_000 },
  memClockMhz: { name: 'clocks.mem', unit: ' MHz', min: 0, max: 50_000 },
  tempC: { name: 'temperature.gpu', unit: ' °C', min: -40, max: 150 },
  memTempC: { name: 'temperature.memory', unit: ' °C', min: -40, max: 150 },
  powerW: { name: 'power.draw', unit: ' W', min: 0, max: 5_000 },
  powerLimitW: { name: 'enforced.power.limit', unit: ' W', min: 1, max: 5_000 },
  utilPct: { name: 'utilization.gpu', unit: ' %', min: 0, max: 100 },
  memUsedMiB: { name: 'memory.used', unit: ' MiB', min: 0, max: 10 * 1024 * 1024 },
  memTotalMiB: { name: 'memory.total', unit: ' MiB', min: 1, max: 10 * 1024 * 1024 },
  throttleMask: { name: 'clocks_throttle_reasons.active', unit: '', min: 0, max: KNOWN_THROTTLE_BITS },
};

/** What an engine's /metrics can say: counts are non-negative (and below 10^15), a cache usage lies in 0..1. */
const ENGINE_BOUNDS: Record<EngineField, Bound> = {
  running: { name: 'requests running', unit: '', min: 0, max: 1e9 },
  waiting: { name: 'requests waiting', unit: '', min: 0, max: 1e9 },
  kvUsage: { name: 'KV cache usage', unit: '', min: 0, max: 1 },
  preemptionsTotal: { name: 'preemptions counter', unit: '', min: 0, max: 1e15 },
  prefixCacheHitsTotal: { name: 'prefix-cache hits counter', unit: '', min: 0, max: 1e15 },
  prefixCacheQueriesTotal: { name: 'prefix-cache queries counter', unit: '', min: 0, max: 1e15 },
  generationTokensTotal: { name: 'generation tokens counter', unit: '', min: 0, max: 1e15 },
  requestDecodeSecondsSum: { name: 'request decode time sum', unit: ' s', min: 0, max: 1e12 },
  requestDecodeCount: { name: 'request decode time count', unit: '', min: 0, max: 1e15 },
  requestQueueSecondsSum: { name: 'request queue time sum', unit: ' s', min: 0, max: 1e12 },
  requestQueueCount: { name: 'request queue time count', unit: '', min: 0, max: 1e15 },
  requestPrefillSecondsSum: { name: 'request prefill time sum', unit: ' s', min: 0, max: 1e12 },
  requestPrefillCount: { name: 'request prefill time count', unit: '', min: 0, max: 1e15 },
  ttftSecondsSum: { name: 'time to first token sum', unit: ' s', min: 0, max: 1e12 },
  ttftCount: { name: 'time to first token count', unit: '', min: 0, max: 1e15 },
};

/** A value as people read it in a message: NaN, Infinity and 0x masks as such. */
function fmtTelemetryValue(bound: Bound, value: number): string {
  if (bound === GPU_BOUNDS.throttleMask && Number.isInteger(value) && value >= 0) return `0x${value.toString(16)}`;
  return `${Number.isFinite(value) ? String(Number(value.toPrecision(6))) : String(value)}${bound.unit}`;
}

function inRange(bound: Bound, value: number): boolean {
  return Number.isFinite(value) && value >= bound.min && value <= bound.max;
}

/**
 * The sample with every impossible value (NaN, ±Inf, out of its physical range, a throttle mask with bits NVML does not
 * define, memory used above the total) set to null and named in `rejected` (field -> the value as read); its throttle
 * class is taken again from what is left, so no verdict rests on a value that cannot be true.
 */
export function boundGpuSample(sample: GpuSample): GpuSample {
  const rejected: Record<string, string> = {};
  const out: GpuSample = { ...sample };
  for (const field of Object.keys(GPU_BOUNDS) as GpuNumberField[]) {
    const value = out[field];
    if (value === null || inRange(GPU_BOUNDS[field], value)) continue;
    rejected[field] = fmtTelemetryValue(GPU_BOUNDS[field], value);
    out[field] = null;
  }
  if (out.memUsedMiB !== null && out.memTotalMiB !== null && out.memUsedMiB > out.memTotalMiB) {
    rejected.memUsedMiB = fmtTelemetryValue(GPU_BOUNDS.memUsedMiB, out.memUsedMiB);
    out.memUsedMiB = null;
  }
  if (Object.keys(rejected).length === 0) return sample;
  out.class = classifyThrottle(out.throttleMask);
  out.rejected = rejected;
  return out;
}

/** A GPU's static facts as nvidia-smi gives them (what boundGpuFacts checks). */
export interface GpuFactValues {
  memoryMiB: number | null;
  powerLimitW: number | null;
  maxSmClockMhz: number | null;
  maxMemClockMhz: number | null;
}

/** Which sample bound each static fact shares: a limit or a total no GPU has is no fact either. */
const FACT_BOUNDS: Record<keyof GpuFactValues, Bound> = {
  memoryMiB: GPU_BOUNDS.memTotalMiB,
  powerLimitW: GPU_BOUNDS.powerLimitW,
  maxSmClockMhz: GPU_BOUNDS.maxSmClockMhz,
  maxMemClockMhz: { name: 'clocks.max.mem', unit: ' MHz', min: 1, max: GPU_BOUNDS.memClockMhz.max },
};

/** The facts with every impossible value set to null, and those values named (nvidia-smi's name and value as read). */
export function boundGpuFacts<T extends GpuFactValues>(facts: T): { facts: T; rejected: string[] } {
  const out: T = { ...facts };
  const rejected: string[] = [];
  for (const field of Object.keys(FACT_BOUNDS) as Array<keyof GpuFactValues>) {
    const value = out[field];
    if (value === null || inRange(FACT_BOUNDS[field], value)) continue;
    rejected.push(`${FACT_BOUNDS[field].name} ${fmtTelemetryValue(FACT_BOUNDS[field], value)}`);
    out[field] = null;
  }
  return { facts: out, rejected };
}

/** The engine sample with impossible values (NaN, ±Inf, negative, a usage above 1, hits above queries) nulled and named. */
export function boundEngineSample(sample: EngineSample): EngineSample {
  const rejected: Record<string, string> = {};
  const out: EngineSample = { ...sample };
  for (const field of Object.keys(ENGINE_BOUNDS) as EngineField[]) {
    const value = out[field];
    if (value === undefined || value === null || inRange(ENGINE_BOUNDS[field], value)) continue;
    rejected[field] = fmtTelemetryValue(ENGINE_BOUNDS[field], value);
    out[field] = null;
  }
  const hits = out.prefixCacheHitsTotal;
  const queries = out.prefixCacheQueriesTotal;
  if (hits !== null && queries !== undefined && queries !== null && hits > queries) {
    // Which of the two lies is unknown: neither is used.
    rejected.prefixCacheHitsTotal = `${fmtTelemetryValue(ENGINE_BOUNDS.prefixCacheHitsTotal, hits)} (above ${queries} queries)`;
    out.prefixCacheHitsTotal = null;
    out.prefixCacheQueriesTotal = null;
  }
  if (Object.keys(rejected).length === 0) return sample;
  out.rejected = rejected;
  return out;
}

/** People's name of a sample field ("temperature.gpu", "KV cache usage"). */
export function telemetryFieldName(source: 'gpu' | 'engine', field: string): string {
  const bounds: Record<string, Bound> = source === 'gpu' ? GPU_BOUNDS : ENGINE_BOUNDS;
  return bounds[field]?.name ?? field;
}
