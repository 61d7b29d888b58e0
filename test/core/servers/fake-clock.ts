import type { WaitClock } from '../../../src/core/servers/readiness.js';

/** Lets every promise chain that is ready to run do so (macrotask turns, no time passes). */
export async function settle(turns = 10): Promise<void> {
  for (let i = 0; i < turns; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

/** A clock whose time moves only by advance(); sleeps end in order of their deadlines. */
export function fakeClock(): WaitClock & { advance(ms: number): Promise<void>; pending(): number } {
  let now = 0;
  const timers: Array<{ at: number; fire: () => void }> = [];
  return {
    now: () => now,
    sleep: (ms, signal) =>
      new Promise<void>((resolve) => {
        if (signal?.aborted) return resolve();
        const timer = {
          at: now + ms,
          fire: () => {
            timers.splice(timers.indexOf(timer), 1);
            signal?.removeEventListener('abort', timer.fire);
            resolve();
          },
        };
        timers.push(timer);
        signal?.addEventListener('abort', timer.fire, { once: true });
      }),
    async advance(ms) {
      const end = now + ms;
      await settle();
      for (;;) {
        const next = timers.filter((t) => t.at <= end).sort((a, b) => a.at - b.at)[0];
        if (!next) break;
        now = next.at;
        next.fire();
        await settle();
      }
      now = end;
    },
    pending: () => timers.length,
  };
}
