import { describe, expect, it } from 'vitest';
import {
  applyEvent,
  createLiveRun,
  levelPhaseText,
  liveElapsedMs,
  liveTimeLeft,
  pointTimeS,
  runPhaseText,
} from '../../src/renderer/lib/live-run.js';
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

describe('live progress of every phase', () => {
  const started = {
    type: 'run-started',
    runId: 'r',
    dir: '/d',
    simulated: true,
    totalLevels: 2,
    startedAt: '2026-01-01T00:00:05.000Z',
    clockOriginWall: '2026-01-01T00:00:00.000Z',
    plan: [
      { concurrency: 4, requests: 100 },
      { concurrency: 8, requests: 100 },
    ],
  } as const;
  const level = {
    type: 'level-started',
    levelIndex: 0,
    concurrency: 4,
    inputLen: 32,
    outputLen: 16,
    warmupRequests: 0,
    measuredRequests: 100,
    serverConfigIndex: 0,
  } as const;

  it('says what the run does: the server start, a sweep restart, prompt building as it goes, each round', () => {
    const run = createLiveRun({ ...started, plan: [...started.plan] }, 0);
    expect(runPhaseText(run)).toBe('checking the server');
    applyEvent(run, { type: 'server-config', index: 1, total: 3 });
    applyEvent(run, { type: 'server-state', state: 'loading' });
    expect(runPhaseText(run)).toBe('waiting for the server to be ready (server configuration 2 of 3)');
    applyEvent(run, { type: 'server-state', state: 'ready' });
    applyEvent(run, level);
    applyEvent(run, { type: 'phase', levelIndex: 0, phase: 'prompts', done: 0, total: 100_512 });
    expect(runPhaseText(run)).toBe(
      'level 1: calibrating the prompt length (100,512 prompts to build) (server configuration 2 of 3)',
    );
    applyEvent(run, { type: 'phase', levelIndex: 0, phase: 'prompts', done: 1005, total: 100_512 });
    expect(levelPhaseText(run.levels[0]!)).toBe('building prompts 1,005/100,512');
    applyEvent(run, { type: 'phase', levelIndex: 0, phase: 'cooldown' });
    expect(levelPhaseText(run.levels[0]!)).toBe('cooling down');
    applyEvent(run, { type: 'phase', levelIndex: 0, phase: 'warmup', atMs: 10_000 });
    expect(levelPhaseText(run.levels[0]!)).toBe('warm-up (discarded)');
    applyEvent(run, { type: 'phase', levelIndex: 0, phase: 'measure', round: 1, atMs: 11_000 });
    expect(levelPhaseText(run.levels[0]!)).toBe('measuring round 2');
  });

  it('keeps the elapsed time across a reload: from the start instant the core sent, not when the view opened', () => {
    const wall = Date.parse('2026-01-01T00:01:05.000Z');
    const first = createLiveRun({ ...started, plan: [...started.plan] }, 0);
    // A view opened later folds the same run-started, at another page clock.
    const reloaded = createLiveRun({ ...started, plan: [...started.plan] }, 50_000);
    expect(liveElapsedMs(first, wall, 60_000)).toBe(60_000);
    expect(liveElapsedMs(reloaded, wall, 60_000)).toBe(60_000);
    // An older core that sent no start instant: since the view saw the run start.
    const old = createLiveRun({ type: 'run-started', runId: 'r', dir: '/d', simulated: true, totalLevels: 1 }, 1000);
    expect(liveElapsedMs(old, wall, 4000)).toBe(3000);
  });

  it('estimates the time left on the run clock and counts it down with the wall clock', () => {
    const run = createLiveRun({ ...started, plan: [...started.plan] }, 0);
    applyEvent(run, level);
    const t0 = Date.parse('2026-01-01T00:00:10.000Z');
    expect(liveTimeLeft(run, t0)).toEqual({ level: null, run: null });
    applyEvent(run, { type: 'phase', levelIndex: 0, phase: 'measure', round: 0, atMs: 10_000 });
    // 40 of 100 requests in 4 s: 10/s, 6 s left of this level; the next (concurrency 8) at 20/s, 5 s.
    applyEvent(run, {
      type: 'request-done',
      levelIndex: 0,
      round: 0,
      ok: true,
      ttftMs: 1,
      e2eMs: 1,
      endMs: 14_000,
      done: 40,
      total: 100,
    });
    const at = Date.parse('2026-01-01T00:00:14.000Z');
    expect(liveTimeLeft(run, at).level).toBeCloseTo(6, 6);
    expect(liveTimeLeft(run, at).run).toBeCloseTo(11, 6);
    expect(liveTimeLeft(run, at + 1000).level).toBeCloseTo(5, 6);
  });
});
