import type { RequestRecord } from '../../shared/request-record.js';
import type { LevelEnergy } from '../../shared/run-record.js';
import type { GpuSample } from '../../shared/telemetry.js';
import { isMeasured, outputCounted } from '../metrics/request-metrics.js';
import { summarize } from '../metrics/percentiles.js';
import { attributeEnergy } from './energy-attribution.js';
import type { TelemetryRecorder } from './types.js';

/** Idle power per GPU and where it was read. */
export interface IdleBaseline {
  byGpu: Map<number, number>;
  source: LevelEnergy['idleSource'];
}

function median(values: number[]): number {
  const v = [...values].sort((a, b) => a - b);
  const mid = v.length >> 1;
  return v.length % 2 ? v[mid]! : (v[mid - 1]! + v[mid]!) / 2;
}

function medianPowerByGpu(samples: readonly GpuSample[]): Map<number, number> {
  const by = new Map<number, number[]>();
  for (const s of samples) if (s.powerW !== null) by.set(s.gpu, [...(by.get(s.gpu) ?? []), s.powerW]);
  return new Map([...by].map(([gpu, p]) => [gpu, median(p)]));
}

/**
 * Idle power per GPU: the median of the readings taken before the first request (`beforeMs`); failing those, of
 * the readings the driver marked idle (mask 0x1) at any time; failing both, none (energy then stays gross).
 */
export function idleBaseline(samples: readonly GpuSample[], beforeMs: number): IdleBaseline {
  const gpus = new Set(samples.filter((s) => s.powerW !== null).map((s) => s.gpu));
  const before = medianPowerByGpu(samples.filter((s) => s.tMs < beforeMs));
  if (gpus.size > 0 && [...gpus].every((g) => before.has(g))) return { byGpu: before, source: 'before-run' };
  const idle = medianPowerByGpu(samples.filter((s) => s.class === 'idle'));
  if (gpus.size > 0 && [...gpus].every((g) => idle.has(g))) return { byGpu: idle, source: 'idle-samples' };
  return { byGpu: new Map(), source: 'none' };
}

type PerRequest = NonNullable<ReturnType<typeof attributeEnergy>>['perRequest'];

function measuredAttributed(records: readonly RequestRecord[], perRequest: PerRequest): RequestRecord[] {
  return records.filter((r) => r.ok && isMeasured(r) && perRequest.has(r.id));
}

function energyRows(
  measured: readonly RequestRecord[],
  perRequest: PerRequest,
): Array<[number, number, number, number]> {
  return measured.map((r) => {
    const e = perRequest.get(r.id)!;
    return [r.id, round(e.prefillJ + e.decodeJ), round(e.prefillJ), round(e.decodeJ)];
  });
}

/** Per measured ok request of a level: [id, total J, prefill J, decode J], as levelEnergy attributes them; null without power readings. */
export function levelEnergyByRequest(
  records: readonly RequestRecord[],
  gpuSamples: readonly GpuSample[],
  idle: IdleBaseline,
): Array<[number, number, number, number]> | null {
  const a = attributeEnergy({ gpuSamples, requests: records, idleW: idle.byGpu });
  return a ? energyRows(measuredAttributed(records, a.perRequest), a.perRequest) : null;
}

/**
 * The energy of one level (warm-up and measured records), shared out to its requests; per-request figures cover
 * the measured ok requests. Null without power readings. The per-request joules stay out of the result so run.json
 * stays the same size whatever the run length; `levelEnergyByRequest` gives them from the same records and samples.
 */
export function levelEnergy(
  records: readonly RequestRecord[],
  gpuSamples: readonly GpuSample[],
  idle: IdleBaseline,
): LevelEnergy | null {
  const a = attributeEnergy({ gpuSamples, requests: records, idleW: idle.byGpu });
  if (!a) return null;
  const measured = measuredAttributed(records, a.perRequest);
  const requests = energyRows(measured, a.perRequest);
  // A server count that could not be true leaves the per-token figures out (the joules per request stand).
  const counted = measured.every(outputCounted);
  const outTokens = counted ? measured.reduce((s, r) => s + r.nOut, 0) : 0;
  const total = requests.reduce((s, r) => s + r[1], 0);
  const idleW = idle.source === 'none' ? null : [...idle.byGpu.values()].reduce((s, w) => s + w, 0);
  return {
    idleW,
    idleSource: idle.source,
    sampleIntervalMs: a.sampleIntervalMs,
    measuredJ: round(a.measuredJ),
    netJ: round(a.netJ),
    attributedJ: round(a.attributedJ),
    unattributedJ: round(a.unattributedJ),
    weights: a.weights,
    ...(counted && a.prefillJPerToken !== undefined ? { prefillJPerToken: a.prefillJPerToken } : {}),
    ...(counted && a.decodeJPerToken !== undefined ? { decodeJPerToken: a.decodeJPerToken } : {}),
    perRequestJ: summarize(requests.map((r) => r[1])),
    jPerOutputTok: outTokens > 0 ? total / outTokens : null,
    prefillJ: round(requests.reduce((s, r) => s + r[2], 0)),
    decodeJ: round(requests.reduce((s, r) => s + r[3], 0)),
  };
}

function round(j: number): number {
  return Math.round(j * 1e4) / 1e4;
}

const baselines = new WeakMap<TelemetryRecorder, IdleBaseline>();

/**
 * levelEnergy over a recorder's samples. The idle baseline is read at the first level the recorder sees, from the
 * readings before its first request (the run's start); where there were none, each level reads the idle-marked ones.
 */
export function levelEnergyFromRecorder(
  recorder: TelemetryRecorder,
  records: readonly RequestRecord[],
): LevelEnergy | null {
  if (!recorder.gpuStatus.available || records.length === 0) return null;
  const samples = recorder.gpuSamples();
  let idle = baselines.get(recorder);
  if (!idle) {
    idle = idleBaseline(
      samples,
      records.reduce((a, r) => Math.min(a, r.sendMs), Infinity),
    );
    baselines.set(recorder, idle);
  } else if (idle.source !== 'before-run') {
    // Readings before a later level follow load, not idle: only the idle-marked ones can serve.
    idle = idleBaseline(samples, -Infinity);
  }
  return levelEnergy(records, samples, idle);
}
