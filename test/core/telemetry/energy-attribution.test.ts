import { describe, expect, it } from 'vitest';
import { applyOverrides, BASE_PROFILE } from '../../../src/core/sim/profile.js';
import { attributeEnergy } from '../../../src/core/telemetry/energy-attribution.js';
import { idleBaseline, levelEnergy, levelEnergyByRequest } from '../../../src/core/telemetry/level-energy.js';
import { integratePowerJ } from '../../../src/core/telemetry/summarize.js';
import type { RequestRecord } from '../../../src/shared/request-record.js';
import type { GpuSample } from '../../../src/shared/telemetry.js';
import { makeRecord } from '../metrics/make-record.js';
import { gpuSample } from './helpers.js';
import { simEnergyRun } from './sim-energy-run.js';

/** Power readings every `every` ms over [0, toMs] on one GPU, the wattage a function of time. */
function readings(toMs: number, every: number, watts: (t: number) => number, gpu = 0): GpuSample[] {
  const out: GpuSample[] = [];
  for (let t = 0; t <= toMs; t += every) out.push(gpuSample({ tMs: t, gpu, powerW: watts(t) }));
  return out;
}

/** A request streaming one token every `gapMs` from its first token on. */
function streamed(
  id: number,
  sendMs: number,
  firstMs: number,
  tokens: number,
  gapMs: number,
  nIn = 100,
): RequestRecord {
  const chunks: Array<[number, number]> = [];
  for (let i = 0; i < tokens; i++) chunks.push([firstMs + i * gapMs, 1]);
  return makeRecord({
    id,
    sendMs,
    firstTokenMs: firstMs,
    endMs: chunks.at(-1)![0],
    chunks,
    nIn,
    nOut: tokens,
    clientChunkCount: tokens,
  });
}

const wobble = (t: number): number => 300 + 150 * Math.sin(t / 700) + 40 * Math.cos(t / 130);

describe('energy attribution (synthetic samples, pure)', () => {
  it('sums to the measured energy minus idle within 1 % over a run, and exactly with what no request could take', () => {
    const samples = readings(12_000, 500, wobble);
    // Overlapping requests that keep the GPU busy from 0 to 12 s, in staggered waves.
    const requests = [
      streamed(1, 0, 80, 200, 30),
      streamed(2, 0, 120, 150, 40),
      streamed(3, 3000, 3100, 300, 25),
      streamed(4, 5900, 6000, 120, 50),
      streamed(5, 6400, 6480, 230, 24),
      streamed(6, 9000, 9050, 150, 20),
    ];
    const idleW = 70;
    const a = attributeEnergy({ gpuSamples: samples, requests, idleW: new Map([[0, idleW]]) })!;
    const measured = integratePowerJ(samples, a.fromMs, a.toMs)!;
    const net = measured - (idleW * (a.toMs - a.fromMs)) / 1000;
    expect(a.measuredJ).toBeCloseTo(measured, 6);
    expect(a.netJ).toBeCloseTo(net, 6);
    const given = [...a.perRequest.values()].reduce((s, e) => s + e.prefillJ + e.decodeJ, 0);
    expect(Math.abs(given - net) / net).toBeLessThan(0.01);
    expect(given).toBeCloseTo(a.attributedJ, 6);
    expect(a.attributedJ + a.unattributedJ).toBeCloseTo(net, 6);
    expect(a.sampleIntervalMs).toBe(500);
  });

  it('keeps the energy of a stretch with no request apart, and splits equal requests equally', () => {
    const samples = readings(10_000, 250, () => 400);
    const requests = [
      streamed(1, 0, 50, 100, 30),
      streamed(2, 0, 50, 100, 30),
      // 3.02 s .. 6 s: nobody runs, yet the GPU draws 400 W (the interval holding 3.02 s goes to requests 1 and 2)
      streamed(3, 6000, 6050, 130, 30),
    ];
    const a = attributeEnergy({ gpuSamples: samples, requests, idleW: new Map([[0, 100]]) })!;
    const e = (id: number) => a.perRequest.get(id)!;
    expect(e(1).prefillJ + e(1).decodeJ).toBeCloseTo(e(2).prefillJ + e(2).decodeJ, 9);
    // 300 W above idle over the gap's whole sample intervals (3.25 s .. 6 s) went to nobody
    expect(a.unattributedJ).toBeCloseTo(300 * 2.75, 6);
    expect(a.attributedJ + a.unattributedJ).toBeCloseTo(a.netJ, 6);
  });

  it('shares by time active where the samples cannot tell prompt from output cost', () => {
    const samples = readings(4000, 500, () => 300);
    // three sample intervals are too few to fit two costs
    const a = attributeEnergy({ gpuSamples: samples, requests: [streamed(1, 0, 40, 40, 35)] })!;
    expect(a.weights).toBe('time');
    expect(a.prefillJPerToken).toBeUndefined();
    // 40 ms before the first token out of 40 + 39 x 35 ms: the prefill part is that share of the energy
    const e = a.perRequest.get(1)!;
    expect(e.prefillJ / (e.prefillJ + e.decodeJ)).toBeCloseTo(40 / (40 + 39 * 35), 9);
    expect(attributeEnergy({ gpuSamples: [], requests: [streamed(1, 0, 40, 10, 35)] })).toBeNull();
  });
});

describe('idle baseline', () => {
  it('reads the GPU before the first request, else its idle-marked readings, else none', () => {
    const samples = [
      gpuSample({ tMs: 0, powerW: 60, class: 'idle' }),
      gpuSample({ tMs: 500, powerW: 64, class: 'idle' }),
      gpuSample({ tMs: 1000, powerW: 400 }),
      gpuSample({ tMs: 9000, powerW: 90, class: 'idle' }),
    ];
    expect(idleBaseline(samples, 800)).toEqual({ byGpu: new Map([[0, 62]]), source: 'before-run' });
    expect(idleBaseline(samples, -1)).toEqual({ byGpu: new Map([[0, 64]]), source: 'idle-samples' });
    expect(idleBaseline([gpuSample({ tMs: 1000, powerW: 400 })], 0).source).toBe('none');
  });
});

describe('energy attribution against the simulator’s truth (virtual time)', () => {
  const profile = applyOverrides({ ...BASE_PROFILE, name: 'energy' }, { 'eos-prob': 0 }, 'test');
  const tickMs = 200;
  const run = simEnergyRun(profile, { slots: 4, requests: 60, tickMs });
  const netW = profile.gpuFullPowerW - profile.gpuIdlePowerW;
  // One sample interval of the whole GPU's power above idle: no attribution can place energy finer than that.
  const bound = (netW * tickMs) / 1000;

  it('gives each request its true energy within one sample interval’s energy, and the run’s total within the same', () => {
    const idle = idleBaseline(run.samples, run.records[0]!.sendMs);
    expect(idle).toEqual({ byGpu: new Map([[0, profile.gpuIdlePowerW]]), source: 'before-run' });
    const a = attributeEnergy({ gpuSamples: run.samples, requests: run.records, idleW: idle.byGpu })!;
    expect(run.truth.size).toBe(60);
    let truthSum = 0;
    const relErrors: number[] = [];
    for (const [id, t] of run.truth) {
      const e = a.perRequest.get(id)!;
      const truth = t.prefillJ + t.decodeJ;
      truthSum += truth;
      expect(Math.abs(e.prefillJ + e.decodeJ - truth)).toBeLessThan(bound);
      relErrors.push(Math.abs(e.prefillJ + e.decodeJ - truth) / truth);
    }
    expect(Math.abs(a.netJ - truthSum)).toBeLessThan(bound);
    relErrors.sort((x, y) => x - y);
    expect(relErrors[relErrors.length >> 1]!).toBeLessThan(0.05);
    // The fit finds what a prompt token costs: the GPU's load power for 1 / prefill-tok-per-s seconds.
    expect(a.weights).toBe('fitted');
    const promptCost = netW / profile.prefillTokPerS;
    expect(a.prefillJPerToken!).toBeGreaterThan(promptCost * 0.75);
    expect(a.prefillJPerToken!).toBeLessThan(promptCost * 1.25);
  });

  it('fills the level record: measured requests only, joules per output token, prefill and decode parts', () => {
    const idle = idleBaseline(run.samples, run.records[0]!.sendMs);
    const warm = run.records.map((r, i) => (i < 4 ? { ...r, warmup: true, round: -1 } : r));
    const level = levelEnergy(warm, run.samples, idle)!;
    // run.json stays bounded: the per-request joules are not in the level record, and come from the same inputs.
    expect(level.requests).toBeUndefined();
    const rows = levelEnergyByRequest(warm, run.samples, idle)!;
    expect(rows).toHaveLength(56);
    expect(level.idleW).toBe(profile.gpuIdlePowerW);
    expect(level.idleSource).toBe('before-run');
    expect(level.sampleIntervalMs).toBe(tickMs);
    expect(level.perRequestJ.n).toBe(56);
    const total = rows.reduce((s, r) => s + r[1], 0);
    expect(level.prefillJ + level.decodeJ).toBeCloseTo(total, 2);
    const outTokens = warm.filter((r) => !r.warmup).reduce((s, r) => s + r.nOut, 0);
    expect(level.jPerOutputTok!).toBeCloseTo(total / outTokens, 9);
    expect(level.attributedJ + level.unattributedJ).toBeCloseTo(level.netJ, 2);
  });
});
