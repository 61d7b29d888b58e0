import { describe, expect, it } from 'vitest';
import { waitReady, type ReadinessOutcome } from '../../../src/core/servers/readiness.js';
import { fakeClock, settle } from './fake-clock.js';

/** A deferred promise. */
function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve: (value: T) => void = () => undefined;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/** Starts a wait and records its outcome once it is known. */
function track(promise: Promise<ReadinessOutcome>): { outcome: () => ReadinessOutcome | undefined } {
  let outcome: ReadinessOutcome | undefined;
  void promise.then((o) => {
    outcome = o;
  });
  return { outcome: () => outcome };
}

describe('the readiness loop', () => {
  it('polls the health check every pollMs until it answers, then is ready', async () => {
    const clock = fakeClock();
    let calls = 0;
    const wait = track(
      waitReady({
        probe: async () => ++calls >= 3,
        exited: deferred().promise,
        timeoutMs: 60_000,
        pollMs: 500,
        clock,
      }),
    );
    await settle();
    expect(calls).toBe(1);
    expect(wait.outcome()).toBeUndefined();
    await clock.advance(499);
    expect(calls).toBe(1);
    await clock.advance(1);
    expect(calls).toBe(2);
    await clock.advance(500);
    expect(calls).toBe(3);
    expect(wait.outcome()).toBe('ready');
    expect(clock.pending()).toBe(0); // the time-out and the poll sleep are gone
  });

  it('waits for the ready line as well as the health check', async () => {
    const clock = fakeClock();
    const line = deferred();
    const wait = track(
      waitReady({
        probe: async () => true,
        readyLine: line.promise,
        exited: deferred().promise,
        timeoutMs: 10_000,
        pollMs: 100,
        clock,
      }),
    );
    await clock.advance(5_000);
    expect(wait.outcome()).toBeUndefined();
    line.resolve();
    await settle();
    expect(wait.outcome()).toBe('ready');
  });

  it('times out after timeoutMs of clock time, not before', async () => {
    const clock = fakeClock();
    let calls = 0;
    const wait = track(
      waitReady({
        probe: async () => {
          calls++;
          return false;
        },
        exited: deferred().promise,
        timeoutMs: 30_000,
        pollMs: 1_000,
        clock,
      }),
    );
    await clock.advance(29_999);
    expect(wait.outcome()).toBeUndefined();
    await clock.advance(1);
    expect(wait.outcome()).toBe('timeout');
    const after = calls;
    await clock.advance(10_000);
    expect(calls).toBe(after); // polling stopped with the verdict
    expect(clock.pending()).toBe(0);
  });

  it('ends at the exit of the process', async () => {
    const clock = fakeClock();
    const exited = deferred();
    const wait = track(
      waitReady({ probe: async () => false, exited: exited.promise, timeoutMs: 60_000, pollMs: 100, clock }),
    );
    await clock.advance(300);
    exited.resolve();
    await settle();
    expect(wait.outcome()).toBe('exit');
    expect(clock.pending()).toBe(0);
  });

  it("ends on the caller's abort, also one that came before the wait, and stops the probe", async () => {
    const clock = fakeClock();
    const controller = new AbortController();
    let probeSignal: AbortSignal | undefined;
    const wait = track(
      waitReady({
        probe: (signal) => {
          probeSignal = signal;
          return new Promise<boolean>(() => undefined); // a health check that never answers
        },
        exited: deferred().promise,
        timeoutMs: 60_000,
        pollMs: 100,
        signal: controller.signal,
        clock,
      }),
    );
    await settle();
    expect(probeSignal?.aborted).toBe(false);
    controller.abort();
    await settle();
    expect(wait.outcome()).toBe('abort');
    expect(probeSignal?.aborted).toBe(true);

    const early = track(
      waitReady({
        probe: async () => false,
        exited: deferred().promise,
        timeoutMs: 60_000,
        pollMs: 100,
        signal: controller.signal,
        clock,
      }),
    );
    await settle();
    expect(early.outcome()).toBe('abort');
    expect(clock.pending()).toBe(0);
  });
});
