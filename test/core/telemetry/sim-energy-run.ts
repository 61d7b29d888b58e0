import { createRng } from '../../../src/core/rng.js';
import { FakeGpu } from '../../../src/core/sim/fake-gpu.js';
import { Scheduler } from '../../../src/core/sim/scheduler.js';
import type { SimProfile } from '../../../src/core/sim/profile.js';
import type { RequestRecord } from '../../../src/shared/request-record.js';
import type { GpuSample } from '../../../src/shared/telemetry.js';
import { makeRecord } from '../metrics/make-record.js';
import { VirtualClock } from '../sim/virtual-clock.js';
import { gpuSample } from './helpers.js';

/** What a simulated run left: the client's records, the GPU's power readings, and the engine's energy truth. */
export interface SimEnergyRun {
  records: RequestRecord[];
  samples: GpuSample[];
  /** Energy truth per request id (J above idle): prefill and decode parts. */
  truth: Map<number, { prefillJ: number; decodeJ: number }>;
}

/**
 * Drives the simulator's engine and fake GPU on a virtual clock, closed loop: `slots` clients, each sending its next
 * request (seeded prompt and output lengths) when the last one ends, sometimes after a pause. The GPU is read every
 * `tickMs`, idle for a second before the first request and after the last. Same inputs, same run, on any machine.
 */
export function simEnergyRun(
  profile: SimProfile,
  opts: { slots: number; requests: number; tickMs: number },
): SimEnergyRun {
  const clock = new VirtualClock();
  const gpu = new FakeGpu(profile, 0);
  const scheduler = new Scheduler(profile, createRng(7), gpu, clock);
  const rng = createRng(11);
  const samples: GpuSample[] = [];
  const records: RequestRecord[] = [];
  const truth = new Map<number, { prefillJ: number; decodeJ: number }>();
  let sent = 0;
  let done = 0;
  let lastEnd = -1;
  const tick = (): void => {
    const now = clock.nowMs();
    gpu.tick(now);
    samples.push(gpuSample({ tMs: now, powerW: gpu.powerW, class: gpu.utilPct === 0 ? 'idle' : 'full-speed' }));
    if (done < opts.requests || now < lastEnd + 1000) clock.setTimer(tick, opts.tickMs);
  };
  const send = (): void => {
    if (sent >= opts.requests) return;
    const id = sent++;
    const promptTokens = 128 + Math.floor(rng() * 1900);
    const target = 16 + Math.floor(rng() * 240);
    const record = makeRecord({ id, sendMs: clock.nowMs(), nIn: promptTokens, expectedIn: promptTokens, nOut: target });
    records.push(record);
    const seq = {
      promptTokens,
      cachedTokens: 0,
      target,
      generated: 0,
      stallAt: -1,
      stallMs: 0,
      onTokens: (count: number, end: boolean): void => {
        const now = clock.nowMs();
        record.firstTokenMs ??= now;
        record.chunks.push([now, count]);
        record.clientChunkCount++;
        if (!end) return;
        record.endMs = now;
        truth.set(id, { prefillJ: seq.prefillJ ?? 0, decodeJ: seq.decodeJ ?? 0 });
        done++;
        lastEnd = now;
        // Some clients think a while before the next request: the batch size moves, the GPU idles now and then.
        const pause = rng() < 0.3 ? 50 + rng() * 400 : 0;
        clock.setTimer(send, pause);
      },
    } as Parameters<Scheduler['submit']>[0];
    scheduler.submit(seq);
  };
  clock.setTimer(tick, opts.tickMs);
  for (let i = 0; i < opts.slots; i++) clock.setTimer(send, 1000 + i * 37);
  clock.runAll();
  return { records, samples, truth };
}
