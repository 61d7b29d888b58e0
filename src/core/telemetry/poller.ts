/** A periodic async task that never overlaps itself; stop() waits for the tick in flight. */
export interface Poller {
  stop(): Promise<void>;
}

/** Runs tick now and then every intervalMs (measured start to start; a slow tick delays the next, never doubles up). */
export function startPoller(intervalMs: number, tick: () => Promise<void>): Poller {
  let stopped = false;
  let timer: NodeJS.Timeout | null = null;
  let inFlight: Promise<void> = Promise.resolve();
  const run = () => {
    if (stopped) return;
    const started = performance.now();
    inFlight = tick()
      .catch(() => undefined)
      .finally(() => {
        if (stopped) return;
        const wait = Math.max(0, intervalMs - (performance.now() - started));
        timer = setTimeout(run, wait);
      });
  };
  run();
  return {
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await inFlight;
    },
  };
}
