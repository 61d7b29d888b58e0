// Integration with the simulator's fake GPU: resources/fake-nvidia-smi answers from the JSON state
// file the sim keeps (SERVEBENCH_FAKE_GPU_STATE). Here the test writes that file itself, in the
// sim's state-file shape, so it pins the contract without depending on the sim's heat model timing.
import { existsSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { createMonoClock } from '../../../src/core/clock.js';
import { throttlingCheck } from '../../../src/core/checks/throttling.js';
import { createTelemetryRecorder } from '../../../src/core/telemetry/recorder.js';
import type { GpuSample } from '../../../src/shared/telemetry.js';

const FAKE = fileURLToPath(new URL('../../../resources/fake-nvidia-smi', import.meta.url));
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function gpuState(o: { tempC: number; clockRatio: number; mask: number; powerW: number; util: number }) {
  return {
    version: 1,
    updatedAtMs: Date.now(),
    driverVersion: '550.54.15',
    cudaVersion: '12.4',
    gpus: [
      {
        index: 0,
        name: 'NVIDIA H100 80GB HBM3 (simulated)',
        uuid: 'GPU-5e1f0000-0000-4000-8000-5e1f00000000',
        pciBusId: '00000000:18:00.0',
        smClockMhz: Math.round(1980 * o.clockRatio),
        maxSmClockMhz: 1980,
        memClockMhz: 2619,
        maxMemClockMhz: 2619,
        tempC: o.tempC,
        memTempC: null,
        powerW: o.powerW,
        powerLimitW: 700,
        utilPct: o.util,
        memUtilPct: 50,
        memUsedMiB: 70000,
        memTotalMiB: 81559,
        pstate: 'P0',
        throttleMask: o.mask,
        fanPct: null,
      },
    ],
    processes: [{ pid: 424242, name: 'servebench-sim', usedMiB: 70000, gpuIndex: 0 }],
  };
}

function writeState(file: string, state: unknown) {
  writeFileSync(`${file}.tmp`, JSON.stringify(state));
  renameSync(`${file}.tmp`, file);
}

/** Waits for the first sample matching `pred` while the recorder runs. */
function waitForSample(pred: (s: GpuSample) => boolean) {
  let resolve: () => void = () => undefined;
  const done = new Promise<void>((r) => {
    resolve = r;
  });
  return { onGpuSample: (s: GpuSample) => pred(s) && resolve(), done };
}

describe.skipIf(!existsSync(FAKE))('with the simulator fake GPU (resources/fake-nvidia-smi)', () => {
  async function run(hot: Parameters<typeof gpuState>[0], hotClass: GpuSample['class']) {
    const dir = mkdtempSync(join(tmpdir(), 'sb-gpu-'));
    dirs.push(dir);
    const file = join(dir, 'gpu.json');
    writeState(file, gpuState({ tempC: 45, clockRatio: 1, mask: 0, powerW: 500, util: 100 }));
    const clock = createMonoClock();
    let wanted: (s: GpuSample) => boolean = (s) => s.class === 'full-speed';
    let hook = waitForSample((s) => wanted(s));
    const recorder = createTelemetryRecorder({
      clock,
      nvidiaSmiPath: FAKE,
      env: { ...process.env, SERVEBENCH_FAKE_GPU_STATE: file },
      intervalMs: 20,
      clientIntervalMs: 0,
      ownPids: () => [424242],
      onGpuSample: (s) => hook.onGpuSample(s),
    });
    await recorder.start();
    await hook.done;
    const cool = recorder.gpuSamples();
    const hotFrom = clock.nowMs();
    wanted = (s) => s.class === hotClass;
    hook = waitForSample((s) => wanted(s));
    writeState(file, gpuState(hot));
    await hook.done;
    // a few more hot samples, so the window is mostly hot
    let more = 0;
    wanted = () => ++more >= 5;
    hook = waitForSample((s) => wanted(s));
    await hook.done;
    await recorder.stop();
    const hotSamples = recorder.gpuSamples(hotFrom).filter((s) => s.class === hotClass);
    return { recorder, cool, hotSamples };
  }

  it('follows the fake GPU from cool to thermal slowdown and fails the check', async () => {
    const { recorder, cool, hotSamples } = await run(
      { tempC: 91, clockRatio: 0.7, mask: 0x60, powerW: 520, util: 100 },
      'thermal',
    );
    expect(recorder.gpuStatus).toEqual({ available: true, source: 'nvidia-smi' });
    expect(recorder.warnings()).toEqual([]);
    expect(cool.length).toBeGreaterThan(0);
    const from = hotSamples[0]!.tMs;
    const to = hotSamples.at(-1)!.tMs;
    const t = recorder.summarizeWindow(from, to, 1000);
    expect(t.throttle.thermalFraction).toBe(1);
    expect(t.clockRatioMin).toBeCloseTo(0.7, 2);
    expect(t.tempMaxC).toBe(91);
    expect(throttlingCheck(t).status).toBe('fail');
    expect(recorder.gpuInfo()[0]).toMatchObject({ driver: '550.54.15', maxSmClockMhz: 1980 });
  });

  it('a power-capped fake GPU only warns', async () => {
    const { recorder, hotSamples } = await run(
      { tempC: 70, clockRatio: 1, mask: 0x4, powerW: 700, util: 100 },
      'power-cap',
    );
    const t = recorder.summarizeWindow(hotSamples[0]!.tMs, hotSamples.at(-1)!.tMs, 1000);
    expect(throttlingCheck(t).status).toBe('warn');
  });
});
