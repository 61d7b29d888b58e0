import { describe, expect, it } from 'vitest';
import { counterDelta, integratePowerJ, summarizeTelemetry } from '../../../src/core/telemetry/summarize.js';
import type { EngineSample } from '../../../src/shared/telemetry.js';
import { gpuSample } from './helpers.js';

const engine = (tMs: number, o: Partial<EngineSample> = {}): EngineSample => ({
  tMs,
  running: null,
  waiting: null,
  kvUsage: null,
  preemptionsTotal: null,
  prefixCacheHitsTotal: null,
  generationTokensTotal: null,
  ...o,
});

describe('energy and counters', () => {
  it('integrates power with the trapezoid rule, interpolating at the window edges', () => {
    const samples = [
      gpuSample({ tMs: 0, powerW: 100 }),
      gpuSample({ tMs: 1000, powerW: 300 }),
      gpuSample({ tMs: 2000, powerW: 300 }),
    ];
    // 0..2000: 200 W x 1 s + 300 W x 1 s = 500 J
    expect(integratePowerJ(samples, 0, 2000)).toBeCloseTo(500);
    // 500..1500: power 200 at 500 ms -> trapezoid to 300 at 1000 = 125 J, then 150 J
    expect(integratePowerJ(samples, 500, 1500)).toBeCloseTo(275);
    // a null reading is skipped, not read as 0 W
    expect(integratePowerJ([...samples, gpuSample({ tMs: 1500, powerW: null })], 0, 2000)).toBeCloseTo(500);
  });

  it('takes counter deltas from the last reading before the window, surviving a reset', () => {
    const pts = [
      { tMs: 0, value: 10 },
      { tMs: 1000, value: 12 },
      { tMs: 2000, value: 15 },
      { tMs: 3000, value: 2 },
      { tMs: 4000, value: 4 },
    ];
    expect(counterDelta(pts, 1500, 2500)).toBe(3);
    expect(counterDelta(pts, 1000, 4000)).toBe(3 + 2 + 2);
    expect(counterDelta([], 0, 1)).toBeNull();
  });
});

describe('summarizeTelemetry', () => {
  it('summarizes only the measured window, summing energy over GPUs', () => {
    const gpu = [
      gpuSample({ tMs: 0, class: 'idle', throttleMask: 1, smClockMhz: 345, tempC: 30, powerW: 70 }),
      ...[1000, 1500, 2000, 2500, 3000].flatMap((t, i) => [
        gpuSample({
          tMs: t,
          gpu: 0,
          powerW: 400,
          tempC: 60 + i,
          smClockMhz: i === 2 ? 1485 : 1980,
          class: i === 2 ? 'thermal' : 'full-speed',
          throttleMask: i === 2 ? 0x20 : 0,
        }),
        gpuSample({ tMs: t, gpu: 1, powerW: 200, tempC: 50, class: 'power-cap', throttleMask: 4 }),
      ]),
      gpuSample({ tMs: 9000, class: 'thermal', tempC: 95 }),
    ];
    const t = summarizeTelemetry({
      source: 'nvidia-smi',
      gpuSamples: gpu,
      engineSamples: [
        engine(500, { preemptionsTotal: 1, kvUsage: 0.99, prefixCacheHitsTotal: 0 }),
        engine(1200, { preemptionsTotal: 1, kvUsage: 0.5, waiting: 4, running: 8, prefixCacheHitsTotal: 0 }),
        engine(2200, { preemptionsTotal: 4, kvUsage: 0.9, waiting: 7, running: 16, prefixCacheHitsTotal: 0 }),
      ],
      processSnapshots: [{ tMs: 100, processes: [{ pid: 9, name: 'python3', usedMemoryMiB: 100 }] }],
      fromMs: 1000,
      toMs: 3000,
      outputTokens: 1000,
    });
    expect(t.samples).toBe(10);
    expect(t.tempMaxC).toBe(64);
    expect(t.smClockMinMhz).toBe(1485);
    expect(t.clockRatioMin).toBeCloseTo(0.75);
    expect(t.throttle).toEqual({
      thermalFraction: 0.1,
      hwSlowdownFraction: 0,
      powerCapFraction: 0.5,
      idleFraction: 0,
      unknownFraction: 0,
    });
    expect(t.powerMeanW).toBeCloseTo(600);
    // GPU 0: 400 W for 2 s; GPU 1: 200 W for 2 s -> 1200 J over 1000 tokens
    expect(t.energyJ).toBeCloseTo(1200);
    expect(t.jPerOutputTok).toBeCloseTo(1.2);
    expect(t.kvUsagePeak).toBe(0.9);
    expect(t.waitingPeak).toBe(7);
    expect(t.runningPeak).toBe(16);
    expect(t.preemptions).toBe(3);
    expect(t.prefixCacheHits).toBe(0);
    expect(t.otherGpuProcesses).toEqual(['9 python3 (100 MiB)']);
  });

  it('without a GPU source: source unavailable with the reason, numbers null', () => {
    const t = summarizeTelemetry({
      source: 'unavailable',
      reason: 'nvidia-smi not found',
      gpuSamples: [],
      engineSamples: [],
      fromMs: 0,
      toMs: 10,
      outputTokens: 5,
    });
    expect(t).toMatchObject({
      source: 'unavailable',
      reason: 'nvidia-smi not found',
      samples: 0,
      smClockMeanMhz: null,
      energyJ: null,
      jPerOutputTok: null,
      preemptions: null,
      throttle: {
        thermalFraction: null,
        hwSlowdownFraction: null,
        powerCapFraction: null,
        idleFraction: null,
        unknownFraction: null,
      },
    });
  });
});
