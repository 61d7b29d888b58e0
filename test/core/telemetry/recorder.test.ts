import { describe, expect, it } from 'vitest';
import { createMonoClock } from '../../../src/core/clock.js';
import { preemptionsCheck } from '../../../src/core/checks/preemptions.js';
import { throttlingCheck } from '../../../src/core/checks/throttling.js';
import { createTelemetryRecorder } from '../../../src/core/telemetry/recorder.js';
import type { EngineSample, GpuSample } from '../../../src/shared/telemetry.js';
import { countdown, FAKE_NVIDIA_SMI, scenarioEnv, stepClock } from './helpers.js';

/**
 * Records a scenario until `count` GPU samples arrived; returns the recorder (stopped), exactly the first `count`
 * samples (more may arrive before stop, as many as the machine's speed lets in) and the run-clock bounds.
 */
async function record(
  scenario: string,
  count: number,
  extra: Partial<Parameters<typeof createTelemetryRecorder>[0]> = {},
) {
  const clock = stepClock();
  const seen = countdown<GpuSample>(count);
  const recorder = createTelemetryRecorder({
    clock,
    nvidiaSmiPath: FAKE_NVIDIA_SMI,
    env: scenarioEnv(scenario),
    intervalMs: 20,
    clientIntervalMs: 0,
    onGpuSample: seen.add,
    ...extra,
  });
  const before = clock.nowMs();
  await recorder.start();
  await seen.done;
  await recorder.stop();
  const after = clock.nowMs();
  return { recorder, samples: recorder.gpuSamples().slice(0, count), before, after };
}

function window(samples: GpuSample[]) {
  return { from: samples[0]?.tMs ?? 0, to: samples.at(-1)?.tMs ?? 0 };
}

describe('telemetry recorder over recorded nvidia-smi outputs', () => {
  it('samples carry run-clock times between start and stop, in read order', async () => {
    const { recorder, before, after } = await record('a100x2-550-power-cap', 12);
    const samples = recorder.gpuSamples();
    expect(samples.length).toBeGreaterThanOrEqual(12);
    for (const s of samples) {
      expect(s.tMs).toBeGreaterThanOrEqual(before);
      expect(s.tMs).toBeLessThanOrEqual(after);
    }
    for (let i = 1; i < samples.length; i++) expect(samples[i]!.tMs).toBeGreaterThanOrEqual(samples[i - 1]!.tMs);
    expect(new Set(samples.map((s) => s.gpu))).toEqual(new Set([0, 1]));
    expect(recorder.gpuStatus).toEqual({ available: true, source: 'nvidia-smi' });
    const mid = samples[5]!.tMs;
    expect(recorder.gpuSamples(mid).every((s) => s.tMs >= mid)).toBe(true);
  });

  it('a thermal run is detected, with episodes, and fails the throttling check', async () => {
    const { recorder, samples } = await record('rtx4090-555-thermal', 17);
    const { from, to } = window(samples);
    const t = recorder.summarizeWindow(from, to, 5000);
    expect(t.source).toBe('nvidia-smi');
    expect(t.throttle.thermalFraction).toBeGreaterThan(0.5);
    expect(t.tempMaxC).toBe(88);
    expect(t.clockRatioMin).toBeCloseTo(2100 / 3120);
    expect(t.energyJ).toBeGreaterThan(0);
    expect(t.jPerOutputTok).toBeCloseTo((t.energyJ ?? 0) / 5000);
    const throttling = throttlingCheck(t);
    expect(throttling).toMatchObject({ status: 'fail', code: 'gpu-slowed' });
    expect(throttling.facts.thermalFraction).toBeGreaterThan(0);
    expect(recorder.episodes().some((e) => e.kind === 'thermal' && e.lowestClockRatio !== null)).toBe(true);
    // the RTX's memory temperature is [N/A]: null, never 0
    expect(samples.every((s) => s.memTempC === null)).toBe(true);
    // another process holds GPU memory: warned before the run
    expect(recorder.warnings()).toEqual([
      expect.stringMatching(/other processes hold GPU memory.*48213 python3 \(18210 MiB\)/),
    ]);
    expect(t.otherGpuProcesses).toEqual(['48213 python3 (18210 MiB)']);
  });

  it('a power-capped run only warns', async () => {
    const { recorder, samples } = await record('a100x2-550-power-cap', 16);
    const { from, to } = window(samples);
    const t = recorder.summarizeWindow(from, to, 1000);
    expect(t.throttle.powerCapFraction).toBeGreaterThan(0.5);
    expect(t.throttle.thermalFraction).toBe(0);
    const throttling = throttlingCheck(t);
    expect(throttling).toMatchObject({ status: 'warn', code: 'power-capped' });
    expect(throttling.facts.powerCapFraction).toBeGreaterThan(0);
  });

  it('a cool run passes; the warm-up stretch before the window is left out', async () => {
    const { recorder, samples } = await record('h100-535', 13);
    const loaded = samples.filter((s) => s.class === 'full-speed');
    const { from, to } = window(loaded.slice(0, 8));
    const t = recorder.summarizeWindow(from, to, 1000);
    expect(t.throttle.idleFraction).toBe(0);
    expect(t.clockRatioMean).toBe(1);
    expect(throttlingCheck(t)).toMatchObject({ status: 'pass', code: 'no-slowdown' });
    expect(recorder.gpuInfo()[0]).toMatchObject({
      name: 'NVIDIA H100 80GB HBM3',
      driver: '535.104.05',
      cudaVersion: '12.2',
    });
    expect(recorder.warnings()).toEqual([]);
  });

  it('an unknown field is dropped and sampling goes on; [Not Supported] masks are unknown, not full speed', async () => {
    const { recorder, samples } = await record('t4-470-unknown-field', 8);
    expect(recorder.droppedFields()).toEqual(['temperature.memory']);
    expect(samples.every((s) => s.class === 'unknown')).toBe(true);
    expect(samples.some((s) => s.powerW === null)).toBe(true);
    const { from, to } = window(samples);
    const c = throttlingCheck(recorder.summarizeWindow(from, to, 1));
    expect(c).toMatchObject({ status: 'warn', code: 'reasons-unknown' });
  });

  it('restarts a loop that dies and records the gap', async () => {
    const { recorder } = await record('h100-535', 9, {
      env: scenarioEnv('h100-535', { FAKE_NVSMI_EXIT_AFTER: '3' }),
      restartDelayMs: 5,
    });
    const gaps = recorder.gaps();
    expect(gaps.length).toBeGreaterThanOrEqual(1);
    expect(gaps[0]!.reason).toMatch(/nvidia-smi loop exited \(code 1\): fake nvidia-smi: GPU lost/);
    expect(gaps[0]!.toMs).not.toBeNull();
    expect(gaps[0]!.toMs!).toBeGreaterThanOrEqual(gaps[0]!.fromMs);
    expect(recorder.gpuSamples().some((s) => s.tMs >= gaps[0]!.toMs!)).toBe(true);
  });

  it('processes of the engine under test are not "other"', async () => {
    const { recorder } = await record('rtx4090-555-thermal', 2, { ownPids: () => [48213] });
    expect(recorder.warnings()).toEqual([]);
  });

  it('scrapes engine metrics on the same clock and counts preemptions in the window', async () => {
    let n = 0;
    const seen = countdown<EngineSample>(4);
    const clock = stepClock();
    const recorder = createTelemetryRecorder({
      clock,
      nvidiaSmiPath: FAKE_NVIDIA_SMI,
      env: scenarioEnv('h100-535'),
      intervalMs: 20,
      engineIntervalMs: 5,
      clientIntervalMs: 0,
      metricsUrl: 'http://engine/metrics',
      fetch: async () => ({
        status: 200,
        body: `vllm:num_preemptions_total{engine="0"} ${n++}\nvllm:num_requests_waiting 2\n`,
      }),
      onEngineSample: seen.add,
    });
    await recorder.start();
    const engine = await seen.done;
    await recorder.stop();
    expect(recorder.engineStatus).toEqual({ available: true });
    const t = recorder.summarizeWindow(engine[0]!.tMs, engine[3]!.tMs, 1);
    expect(t.preemptions).toBe(3);
    expect(t.waitingPeak).toBe(2);
    expect(preemptionsCheck(t)).toMatchObject({ status: 'warn', code: 'preempted' });
  });

  it('waitCool resolves once the GPU is idle and cool, and stops waiting when aborted', async () => {
    const clock = stepClock();
    const recorder = createTelemetryRecorder({
      clock,
      nvidiaSmiPath: FAKE_NVIDIA_SMI,
      env: scenarioEnv('h100-535'),
      intervalMs: 10,
      clientIntervalMs: 0,
    });
    await recorder.start();
    const since = clock.nowMs();
    await recorder.waitCool(40);
    // more frames may have been read in the same chunk since; the gate saw an idle, cool one
    expect(recorder.gpuSamples(since).some((s) => s.class === 'idle' && (s.tempC ?? 99) <= 40)).toBe(true);
    const controller = new AbortController();
    const never = recorder.waitCool(10, controller.signal);
    controller.abort(new Error('cancelled'));
    await expect(never).rejects.toThrow('cancelled');
    await recorder.stop();
  });
});

describe('telemetry recorder without a GPU source', () => {
  it('no nvidia-smi anywhere: start resolves, status unavailable with the fix, throttling warns "unknown"', async () => {
    const clock = createMonoClock();
    const recorder = createTelemetryRecorder({ clock, env: { PATH: '/nonexistent' }, clientIntervalMs: 0 });
    await recorder.start();
    expect(recorder.gpuStatus).toEqual({
      available: false,
      source: 'unavailable',
      reason: 'nvidia-smi not found; install the NVIDIA driver or pass --nvidia-smi PATH',
    });
    const t = recorder.summarizeWindow(0, clock.nowMs(), 100);
    expect(t).toMatchObject({ source: 'unavailable', samples: 0, energyJ: null, smClockMeanMhz: null });
    expect(throttlingCheck(t)).toMatchObject({
      status: 'warn',
      code: 'telemetry-unavailable',
      facts: { reason: 'nvidia-smi not found; install the NVIDIA driver or pass --nvidia-smi PATH' },
    });
    expect(preemptionsCheck(t)).toBeNull();
    await recorder.waitCool(40);
    await recorder.stop();
  });

  it('a wrong --nvidia-smi path and a driver that is not loaded are said in one line', async () => {
    const clock = createMonoClock();
    const wrong = createTelemetryRecorder({ clock, nvidiaSmiPath: '/nonexistent/nvidia-smi', clientIntervalMs: 0 });
    await wrong.start();
    await wrong.stop();
    expect(wrong.gpuStatus.reason).toBe(
      'nvidia-smi not found at /nonexistent/nvidia-smi (--nvidia-smi); pass the path of an executable nvidia-smi',
    );

    const noDriver = createTelemetryRecorder({
      clock,
      nvidiaSmiPath: FAKE_NVIDIA_SMI,
      env: scenarioEnv('no-driver'),
      clientIntervalMs: 0,
    });
    await noDriver.start();
    await noDriver.stop();
    expect(noDriver.gpuStatus.available).toBe(false);
    expect(noDriver.gpuStatus.reason).toMatch(/^nvidia-smi cannot talk to the NVIDIA driver/);
    expect(noDriver.gpuStatus.reason).not.toMatch(/\n/);
  });

  it('a DCGM exporter is used instead when given, and an unreachable one is unavailable', async () => {
    const clock = createMonoClock();
    const seen = countdown<GpuSample>(3);
    const dcgm = createTelemetryRecorder({
      clock,
      dcgmUrl: 'http://gpu-host:9400/metrics',
      intervalMs: 5,
      clientIntervalMs: 0,
      fetch: async () => ({
        status: 200,
        body: 'DCGM_FI_DEV_SM_CLOCK{gpu="0"} 1700\nDCGM_FI_DEV_CLOCK_THROTTLE_REASONS{gpu="0"} 64\n',
      }),
      onGpuSample: seen.add,
    });
    await dcgm.start();
    await seen.done;
    await dcgm.stop();
    expect(dcgm.gpuStatus).toEqual({ available: true, source: 'dcgm' });
    expect(dcgm.gpuSamples()[0]).toMatchObject({ smClockMhz: 1700, class: 'thermal' });

    const down = createTelemetryRecorder({
      clock,
      dcgmUrl: 'http://gpu-host:9400/metrics',
      clientIntervalMs: 0,
      fetch: async () => ({ status: 503, body: '' }),
    });
    await down.start();
    await down.stop();
    expect(down.gpuStatus).toEqual({
      available: false,
      source: 'unavailable',
      reason: expect.stringMatching(/HTTP 503\); check --dcgm-url$/),
    });
  });

  it("reads one DCGM exporter per node, tags each sample with its node, and keeps two nodes' GPU 0 apart", async () => {
    const clock = createMonoClock();
    const seen = countdown<GpuSample>(4);
    const pages: Record<string, string> = {
      'http://node-a:9400/metrics': 'DCGM_FI_DEV_SM_CLOCK{gpu="0"} 1700\n',
      'http://node-b:9400/metrics': 'DCGM_FI_DEV_SM_CLOCK{gpu="0"} 1400\n',
    };
    const recorder = createTelemetryRecorder({
      clock,
      dcgmUrl: 'http://node-a:9400/metrics, http://node-b:9400/metrics,http://node-c:9400/metrics',
      intervalMs: 5,
      clientIntervalMs: 0,
      fetch: async (url) => (pages[url] ? { status: 200, body: pages[url] } : { status: 503, body: '' }),
      onGpuSample: seen.add,
    });
    await recorder.start();
    await seen.done;
    await recorder.stop();
    expect(recorder.gpuStatus).toEqual({ available: true, source: 'dcgm' });
    const byNode = new Map(recorder.gpuSamples().map((s) => [s.node, s] as const));
    expect(byNode.get('node-a:9400')).toMatchObject({ smClockMhz: 1700, nodeGpu: 0 });
    expect(byNode.get('node-b:9400')).toMatchObject({ smClockMhz: 1400, nodeGpu: 0 });
    expect(byNode.get('node-a:9400')!.gpu).not.toBe(byNode.get('node-b:9400')!.gpu);
    expect(recorder.warnings()).toEqual([
      expect.stringMatching(/^DCGM exporter at http:\/\/node-c:9400\/metrics .*HTTP 503/),
    ]);
  });

  it('samples the client itself', async () => {
    const clock = createMonoClock();
    const seen = countdown<unknown>(2);
    const recorder = createTelemetryRecorder({
      clock,
      env: { PATH: '' },
      clientIntervalMs: 10,
      onClientSample: seen.add,
    });
    await recorder.start();
    await seen.done;
    await recorder.stop();
    const [c] = recorder.clientSamples();
    expect(c!.loopLagMs).toBeGreaterThanOrEqual(0);
    expect(c!.cpuPct).toBeGreaterThanOrEqual(0);
  });
});
