import { describe, expect, it } from 'vitest';
import { createMonoClock } from '../../../src/core/clock.js';
import type { RequestExecutor } from '../../../src/core/load/executor.js';
import { poissonSchedule, runClosedLoop, runOpenLoop, waitUntil } from '../../../src/core/load/scheduler.js';
import { StreamAccumulator } from '../../../src/core/load/stream-accumulator.js';
import type { RequestOutcome, RequestSpec } from '../../../src/core/load/stream-client.js';
import { createRng } from '../../../src/core/rng.js';
import { createManualClock } from './manual-clock.js';
import type { ManualClock } from './manual-clock.js';

const specs = (n: number): RequestSpec[] =>
  Array.from({ length: n }, (_, id) => ({
    id,
    path: '/v1/completions',
    body: '{}',
    timeoutMs: 1000,
    requestTag: `s-${id}`,
  }));

/** An executor whose requests take a set virtual time each, and which records how many were in flight. */
function fakeExecutor(clock: ManualClock, durationMs: (id: number) => number) {
  let inFlight = 0;
  const sends: Array<{ id: number; atMs: number; inFlight: number }> = [];
  const executor: RequestExecutor = {
    threads: 0,
    async execute(spec) {
      const sendMs = clock.nowMs();
      inFlight++;
      sends.push({ id: spec.id, atMs: sendMs, inFlight });
      await clock.sleepUntil(sendMs + durationMs(spec.id));
      inFlight--;
      const outcome: RequestOutcome = {
        id: spec.id,
        requestTag: spec.requestTag,
        sendMs,
        endMs: clock.nowMs(),
        httpStatus: 200,
        result: new StreamAccumulator().result(),
      };
      return outcome;
    },
    abortAll: () => undefined,
    startLagWindow: () => undefined,
    endLagWindow: async () => null,
    close: async () => undefined,
  };
  return { executor, sends, maxInFlight: () => Math.max(0, ...sends.map((s) => s.inFlight)) };
}

describe('open loop on a virtual clock', () => {
  it('sends each request at its scheduled time, whatever the earlier ones are still doing', async () => {
    const clock = createManualClock();
    const fake = fakeExecutor(clock, () => 50);
    const seen: number[] = [];
    const outcomes = await clock.run(
      runOpenLoop(
        specs(4),
        [0, 10, 20, 300],
        undefined,
        fake.executor,
        clock,
        (o) => seen.push(o.id),
        undefined,
        (t, s) => clock.sleepUntil(t, s),
      ),
    );
    // The schedule starts 5 ms after the call; no cap, so no request waits for another.
    expect(fake.sends.map((s) => s.atMs)).toEqual([5, 15, 25, 305]);
    expect(outcomes.map((o) => [o.id, o.scheduledMs, o.sendMs, o.endMs])).toEqual([
      [0, 5, 5, 55],
      [1, 15, 15, 65],
      [2, 25, 25, 75],
      [3, 305, 305, 355],
    ]);
    expect(fake.maxInFlight()).toBe(3);
    expect(seen).toEqual([0, 1, 2, 3]);
  });

  it('holds a request for a free slot under a cap and records the wait as schedule lag', async () => {
    const clock = createManualClock();
    const fake = fakeExecutor(clock, () => 50);
    const outcomes = await clock.run(
      runOpenLoop(
        specs(3),
        [0, 10, 20],
        1,
        fake.executor,
        clock,
        () => undefined,
        undefined,
        (t, s) => clock.sleepUntil(t, s),
      ),
    );
    expect(outcomes.map((o) => [o.scheduledMs, o.sendMs])).toEqual([
      [5, 5],
      [15, 55],
      [25, 105],
    ]);
    expect(fake.maxInFlight()).toBe(1);
    expect(outcomes.map((o) => o.sendMs - (o.scheduledMs as number))).toEqual([0, 40, 80]);
  });

  it('stops sending on abort, lets the requests in flight end, and does not wait out the schedule', async () => {
    const clock = createManualClock();
    const fake = fakeExecutor(clock, () => 50);
    const controller = new AbortController();
    void clock.sleepUntil(20).then(() => controller.abort());
    const outcomes = await clock.run(
      runOpenLoop(
        specs(3),
        [0, 1000, 2000],
        undefined,
        fake.executor,
        clock,
        () => undefined,
        controller.signal,
        (t, s) => clock.sleepUntil(t, s),
      ),
    );
    expect(outcomes.map((o) => o.id)).toEqual([0]);
    expect(clock.nowMs()).toBe(55);
  });

  it('replays the same schedule and states from the same seed', async () => {
    const once = async () => {
      const clock = createManualClock();
      const fake = fakeExecutor(clock, (id) => 20 + (id % 3) * 40);
      const offsets = poissonSchedule(40, 25, createRng(7));
      const outcomes = await clock.run(
        runOpenLoop(
          specs(40),
          offsets,
          3,
          fake.executor,
          clock,
          () => undefined,
          undefined,
          (t, s) => clock.sleepUntil(t, s),
        ),
      );
      return { sends: fake.sends, ends: outcomes.map((o) => [o.id, o.sendMs, o.endMs]), max: fake.maxInFlight() };
    };
    const a = await once();
    expect(await once()).toEqual(a);
    expect(a.max).toBe(3);
    expect(a.ends).toHaveLength(40);
  });
});

describe('Poisson schedule', () => {
  it('starts at 0, never goes back, and averages 1/rate between arrivals', () => {
    const t = poissonSchedule(20_000, 50, createRng(1));
    expect(t[0]).toBe(0);
    expect(t.every((x, i) => i === 0 || x >= (t[i - 1] as number))).toBe(true);
    const meanGapMs = (t.at(-1) as number) / (t.length - 1);
    // 20,000 exponential gaps: the mean is within 3 % of 20 ms far beyond 5 sigma (sigma = 0.7 %).
    expect(Math.abs(meanGapMs - 20) / 20).toBeLessThan(0.03);
  });
});

describe('closed loop on a virtual clock', () => {
  it('keeps exactly `concurrency` requests in flight until the list runs out', async () => {
    const clock = createManualClock();
    // No two requests end at the same instant, so every send follows exactly one end.
    const fake = fakeExecutor(clock, (id) => [10, 21, 32, 43][id % 4] as number);
    const outcomes = await clock.run(runClosedLoop(specs(9), 3, fake.executor, () => undefined));
    expect(outcomes).toHaveLength(9);
    // Requests leave in list order, each as soon as a lane is free.
    expect(fake.sends.map((s) => s.id)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8]);
    expect(fake.sends.map((s) => s.inFlight)).toEqual([1, 2, 3, 3, 3, 3, 3, 3, 3]);
    // Request 3 takes the lane request 0 (10 ms) frees; request 4 the one request 1 (21 ms) frees.
    expect(fake.sends.slice(3, 5).map((s) => s.atMs)).toEqual([10, 21]);
  });

  it('sends nothing new after an abort', async () => {
    const clock = createManualClock();
    const fake = fakeExecutor(clock, () => 10);
    const controller = new AbortController();
    const outcomes = await clock.run(
      runClosedLoop(
        specs(10),
        2,
        fake.executor,
        (o) => {
          if (o.id === 2) controller.abort();
        },
        controller.signal,
      ),
    );
    expect(outcomes.map((o) => o.id).sort()).toEqual([0, 1, 2, 3]);
  });
});

describe('waitUntil on the real clock', () => {
  it('never returns before the clock reads the target, however fast or slow the machine', async () => {
    const clock = createMonoClock();
    for (const ahead of [0.2, 1, 2.5, 7, 20]) {
      const target = clock.nowMs() + ahead;
      await waitUntil(clock, target);
      expect(clock.nowMs()).toBeGreaterThanOrEqual(target);
    }
  });

  it('returns at once when the signal has fired', async () => {
    const clock = createMonoClock();
    const controller = new AbortController();
    controller.abort();
    // Far in the future: only the signal can end the wait.
    await waitUntil(clock, clock.nowMs() + 3_600_000, controller.signal);
    expect(controller.signal.aborted).toBe(true);
  });
});
