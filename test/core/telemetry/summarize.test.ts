import { describe, expect, it } from 'vitest';
import {
  counterDelta,
  engineDecodeMean,
  integratePowerJ,
  summarizeTelemetry,
} from '../../../src/core/telemetry/summarize.js';
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

describe("the engine's decode time per request", () => {
  const decode = (tMs: number, seconds: number, count: number): EngineSample =>
    engine(tMs, { requestDecodeSecondsSum: seconds, requestDecodeCount: count });

  it('is the histogram growth between the first and last scrape inside the level, per request counted', () => {
    // 12 s over 30 requests before the level (another level's, slower ones); 8 requests of 0.45 s inside it.
    const samples = [decode(500, 12, 30), decode(1_200, 12.9, 32), decode(2_200, 14.7, 36), decode(3_200, 15.6, 38)];
    expect(engineDecodeMean(samples, 1_000, 3_500)).toEqual({ meanMs: expect.closeTo(450, 9), requests: 6 });
    const t = summarizeTelemetry({
      source: 'unavailable',
      gpuSamples: [],
      engineSamples: samples,
      fromMs: 1_000,
      toMs: 3_500,
      outputTokens: 0,
    });
    expect(t.engineDecodeMeanMs).toBeCloseTo(450, 9);
    expect(t.engineDecodeRequests).toBe(6);
  });

  it('is none with fewer than two scrapes inside, no request finished between them, a reset, or no histogram', () => {
    expect(engineDecodeMean([decode(500, 1, 2), decode(1_500, 2, 4)], 1_000, 2_000)).toBeNull();
    expect(engineDecodeMean([decode(1_100, 2, 4), decode(1_900, 2, 4)], 1_000, 2_000)).toBeNull();
    expect(engineDecodeMean([decode(1_100, 9, 40), decode(1_900, 0.5, 1)], 1_000, 2_000)).toBeNull();
    expect(engineDecodeMean([engine(1_100), engine(1_900)], 1_000, 2_000)).toBeNull();
    const t = summarizeTelemetry({
      source: 'unavailable',
      gpuSamples: [],
      engineSamples: [engine(1_100), engine(1_900)],
      fromMs: 1_000,
      toMs: 2_000,
      outputTokens: 0,
    });
    expect('engineDecodeMeanMs' in t).toBe(false);
  });
});
