import { describe, expect, it } from 'vitest';
import { applyEvent, createLiveRun, pointTimeS } from '../../src/renderer/lib/live-run.js';
import type { GpuSample } from '../../src/shared/telemetry.js';

const gpu = (tMs: number): GpuSample => ({
  tMs,
  gpu: 0,
  smClockMhz: 1980,
  maxSmClockMhz: 1980,
  memClockMhz: null,
  tempC: 50,
  memTempC: null,
  powerW: 300,
  powerLimitW: 700,
  utilPct: 90,
  memUsedMiB: null,
  memTotalMiB: null,
  pstate: 'P0',
  throttleMask: 0,
  class: 'full-speed',
});

describe('live run folded from events', () => {
  it('tracks server state, levels, progress, points and the finish', () => {
    const run = createLiveRun({ type: 'run-started', runId: 'r', dir: '/d', simulated: true, totalLevels: 2 }, 1000);
    applyEvent(run, { type: 'server-state', state: 'loading', detail: 'weights' });
    applyEvent(run, { type: 'server-progress', key: 'kv', message: 'GPU KV cache size: 100 tokens' });
    applyEvent(run, {
      type: 'level-started',
      levelIndex: 0,
      concurrency: 2,
      inputLen: 32,
      outputLen: 16,
      warmupRequests: 2,
      measuredRequests: 8,
      serverConfigIndex: 0,
    });
    applyEvent(run, { type: 'phase', levelIndex: 0, phase: 'measure', round: 0 });
    applyEvent(run, {
      type: 'request-done',
      levelIndex: 0,
      round: 0,
      ok: true,
      ttftMs: 12,
      e2eMs: 120,
      endMs: 500,
      done: 3,
      total: 10,
    });
    applyEvent(run, {
      type: 'request-done',
      levelIndex: 0,
      round: 0,
      ok: false,
      ttftMs: null,
      e2eMs: 5,
      endMs: 600,
      done: 4,
      total: 10,
    });
    expect(run.serverState).toBe('loading');
    expect(run.log.map((l) => l.text)).toEqual(['server loading: weights', 'GPU KV cache size: 100 tokens']);
    expect(run.levels[0]).toMatchObject({ concurrency: 2, phase: 'measure', round: 0, done: 4, total: 10, failed: 1 });
    expect(run.points).toHaveLength(2);
    expect(run.points[0]).toMatchObject({ tMs: 500, ttftMs: 12, e2eMs: 120, ok: true });

    applyEvent(run, { type: 'run-finished', runId: 'r', dir: '/d', status: 'cancelled', record: {} as never });
    expect(run.finished?.status).toBe('cancelled');
    expect(run.levels[0]?.phase).toBe('done');
  });

  it('puts request points at their end on the run clock, the GPU samples axis', () => {
    const run = createLiveRun({ type: 'run-started', runId: 'r', dir: '/d', simulated: false, totalLevels: 1 }, 0);
    applyEvent(run, { type: 'gpu-sample', sample: gpu(1000) });
    applyEvent(run, {
      type: 'engine-sample',
      sample: {
        tMs: 1000,
        running: 2,
        waiting: 0,
        kvUsage: 0.1,
        preemptionsTotal: 0,
        prefixCacheHitsTotal: null,
        generationTokensTotal: 10,
      },
    });
    // Arrival order and arrival time do not matter: the request ended at 2960 ms on the run's clock.
    applyEvent(run, {
      type: 'request-done',
      levelIndex: 0,
      round: 0,
      ok: true,
      ttftMs: 1,
      e2eMs: 2,
      endMs: 2960,
      done: 1,
      total: 1,
    });
    applyEvent(run, { type: 'gpu-sample', sample: gpu(1500) });
    expect(pointTimeS(run.points[0]!)).toBeCloseTo(2.96);
    expect(run.gpu.map((g) => g.tMs)).toEqual([1000, 1500]);
    expect(run.engine).toHaveLength(1);
  });

  it('keeps the log bounded', () => {
    const run = createLiveRun({ type: 'run-started', runId: 'r', dir: '/d', simulated: false, totalLevels: 1 }, 0);
    for (let i = 0; i < 1000; i++) applyEvent(run, { type: 'server-log', line: `line ${i}`, stream: 'stdout' });
    expect(run.log.length).toBeLessThanOrEqual(400);
    expect(run.log.at(-1)?.text).toBe('line 999');
  });
});
