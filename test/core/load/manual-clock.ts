import type { Clock } from '../../../src/core/clock.js';

/** A virtual clock: time moves only when `run` jumps to the next pending wake-up, so any machine sees the same states. */
export interface ManualClock extends Clock {
  /** Resolves once virtual time reaches `tMs` (at once if it has, or when the signal fires). */
  sleepUntil(tMs: number, signal?: AbortSignal): Promise<void>;
  /** Drives `work` to its end: lets every ready continuation run, then jumps to the earliest wake-up, and repeats. */
  run<T>(work: Promise<T>): Promise<T>;
}

interface Wake {
  at: number;
  seq: number;
  fire: () => void;
}

/** Creates a manual clock at 0 ms. */
export function createManualClock(): ManualClock {
  let now = 0;
  let seq = 0;
  let wakes: Wake[] = [];
  // Every continuation in a test driven by this clock is a microtask, so one macrotask turn runs them all.
  const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
  return {
    originMonoNs: 0n,
    nowMs: () => now,
    sleepUntil(tMs, signal) {
      if (tMs <= now || signal?.aborted) return Promise.resolve();
      return new Promise<void>((resolve) => {
        const wake: Wake = { at: tMs, seq: seq++, fire: resolve };
        wakes.push(wake);
        signal?.addEventListener(
          'abort',
          () => {
            wakes = wakes.filter((w) => w !== wake);
            resolve();
          },
          { once: true },
        );
      });
    },
    async run<T>(work: Promise<T>): Promise<T> {
      const state: { end: { ok: true; value: T } | { ok: false; error: unknown } | null } = { end: null };
      void work.then(
        (value) => (state.end = { ok: true, value }),
        (error: unknown) => (state.end = { ok: false, error }),
      );
      for (;;) {
        await settle();
        const e = state.end;
        if (e) {
          if (e.ok) return e.value;
          throw e.error;
        }
        if (wakes.length === 0) throw new Error('the work waits on nothing the clock can wake');
        wakes.sort((a, b) => a.at - b.at || a.seq - b.seq);
        now = Math.max(now, (wakes[0] as Wake).at);
        const due = wakes.filter((w) => w.at <= now);
        wakes = wakes.filter((w) => w.at > now);
        for (const w of due) w.fire();
      }
    },
  };
}
