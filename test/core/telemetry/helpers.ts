import { fileURLToPath } from 'node:url';
import type { Clock } from '../../../src/core/clock.js';
import type { GpuSample } from '../../../src/shared/telemetry.js';

/** The fake nvidia-smi that replays test/fixtures/nvidia-smi/<scenario>. */
export const FAKE_NVIDIA_SMI = fileURLToPath(new URL('../../fakes/nvidia-smi-fake.mjs', import.meta.url));

/** Environment selecting a recorded scenario for the fake (plus extra variables). */
export function scenarioEnv(scenario: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { ...process.env, FAKE_NVSMI_SCENARIO: scenario, ...extra };
}

/** A sample with defaults, for pure tests. */
export function gpuSample(overrides: Partial<GpuSample> & Pick<GpuSample, 'tMs'>): GpuSample {
  return {
    gpu: 0,
    smClockMhz: 1980,
    maxSmClockMhz: 1980,
    memClockMhz: 2619,
    tempC: 60,
    memTempC: null,
    powerW: 500,
    powerLimitW: 700,
    utilPct: 100,
    memUsedMiB: 70000,
    memTotalMiB: 81559,
    pstate: 'P0',
    throttleMask: 0,
    class: 'full-speed',
    ...overrides,
  };
}

/** Resolves when `count` calls have been seen; the callback to hand to the recorder. */
export function countdown<T>(count: number): { add: (x: T) => void; done: Promise<T[]> } {
  const seen: T[] = [];
  let resolve: (xs: T[]) => void = () => undefined;
  const done = new Promise<T[]>((r) => {
    resolve = r;
  });
  return {
    add(x) {
      seen.push(x);
      if (seen.length === count) resolve([...seen]);
    },
    done,
  };
}

/**
 * A logical run clock: each reading is one step after the previous one. Every sample read gets its own
 * time, in read order, however the machine batches the pipe reads (a slow reader gets several frames at once).
 */
export function stepClock(stepMs = 10): Clock {
  let readings = 0;
  return { originMonoNs: 0n, nowMs: () => ++readings * stepMs };
}
