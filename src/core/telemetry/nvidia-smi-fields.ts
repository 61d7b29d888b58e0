import type { GpuSample } from '../../shared/telemetry.js';
import { classifyThrottle } from './throttle.js';
import { parseSmiNumber, parseSmiReading, parseSmiText, parseThrottleMask, splitSmiCsv } from './nvidia-smi-values.js';

/** The fields sampled in the `-lms` loop, by their canonical (oldest widely accepted) names. */
export const LOOP_FIELDS = [
  'timestamp',
  'index',
  'clocks.sm',
  'clocks.max.sm',
  'clocks.mem',
  'temperature.gpu',
  'temperature.memory',
  'power.draw',
  'enforced.power.limit',
  'utilization.gpu',
  'memory.used',
  'memory.total',
  'pstate',
  'clocks_throttle_reasons.active',
] as const;

/** Static facts queried once. */
export const STATIC_FIELDS = [
  'index',
  'name',
  'uuid',
  'driver_version',
  'pci.bus_id',
  'memory.total',
  'enforced.power.limit',
  'clocks.max.sm',
  'clocks.max.mem',
] as const;

/**
 * Other names a driver may know a field by, tried in order when the canonical one is refused.
 * Newer drivers renamed clocks_throttle_reasons.* to clocks_event_reasons.* (and may refuse the old name).
 */
export const FIELD_ALTERNATIVES: Readonly<Record<string, readonly string[]>> = {
  'clocks_throttle_reasons.active': ['clocks_event_reasons.active'],
  'power.draw': ['power.draw.instant', 'power.draw.average'],
  'enforced.power.limit': ['power.limit'],
};

/** Fields as probed: what to send, what each one means, and what this driver refused. */
export interface ProbedFields {
  /** Field names to put in --query-gpu, in order. */
  query: string[];
  /** Canonical name of each query field (same order). */
  canonical: string[];
  /** Canonical names this driver refused under every alternative. */
  dropped: string[];
}

/** Index of a canonical field in a probed query, or -1. */
function fieldIndex(fields: ProbedFields, canonical: string): number {
  return fields.canonical.indexOf(canonical);
}

/** Reads one canonical field's raw cell from a split line. */
export function cell(fields: ProbedFields, cells: readonly string[], canonical: string): string | undefined {
  const i = fieldIndex(fields, canonical);
  return i < 0 ? undefined : cells[i];
}

/**
 * Parses one loop line into a sample stamped tMs (run clock at read time), or null for a line
 * that is not a data row (wrong column count, no GPU index: e.g. an error message in the stream).
 */
export function parseLoopLine(
  line: string,
  fields: ProbedFields,
  tMs: number,
  fallbackMax?: (gpu: number) => number | null,
): GpuSample | null {
  if (!line.trim()) return null;
  const cells = splitSmiCsv(line);
  if (cells.length !== fields.query.length) return null;
  const gpu = parseSmiNumber(cell(fields, cells, 'index'));
  if (gpu === null || !Number.isInteger(gpu) || gpu < 0) return null;
  // Readings keep inf and NaN: boundGpuSample names them as impossible rather than as missing.
  const num = (name: string): number | null => parseSmiReading(cell(fields, cells, name));
  const throttleMask = parseThrottleMask(cell(fields, cells, 'clocks_throttle_reasons.active'));
  const maxSm = num('clocks.max.sm') ?? fallbackMax?.(gpu) ?? null;
  return {
    tMs,
    gpu,
    smClockMhz: num('clocks.sm'),
    maxSmClockMhz: maxSm,
    memClockMhz: num('clocks.mem'),
    tempC: num('temperature.gpu'),
    memTempC: num('temperature.memory'),
    powerW: num('power.draw'),
    powerLimitW: num('enforced.power.limit'),
    utilPct: num('utilization.gpu'),
    memUsedMiB: num('memory.used'),
    memTotalMiB: num('memory.total'),
    pstate: parseSmiText(cell(fields, cells, 'pstate')),
    throttleMask,
    class: classifyThrottle(throttleMask),
  };
}
