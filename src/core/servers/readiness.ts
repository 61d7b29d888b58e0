/** Wall time and waiting, injected so that time-outs can be tested without real time. */
export interface WaitClock {
  /** ms since some origin (Date.now() for the real one). */
  now(): number;
  /** Resolves after `ms`, or at once when `signal` aborts (never rejects). */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** The real clock: Date.now() and setTimeout. */
export const realClock: WaitClock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise((resolve) => {
      if (signal?.aborted) return resolve();
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        resolve();
      }
      signal?.addEventListener('abort', done, { once: true });
    }),
};

/** How a wait for readiness ended. */
export type ReadinessOutcome = 'ready' | 'exit' | 'timeout' | 'abort';

/** What the readiness loop watches. */
export interface ReadinessOptions {
  /** One health check (e.g. GET /health answers 200); called until it says true. Must stop when `signal` aborts. */
  probe(signal: AbortSignal): Promise<boolean>;
  /** Resolves when the engine's ready line was seen (already resolved when it has none). */
  readyLine?: Promise<void>;
  /** Resolves when the process exited. */
  exited: Promise<unknown>;
  timeoutMs: number;
  pollMs: number;
  /** The caller's cancel. */
  signal?: AbortSignal;
  clock?: WaitClock;
}

/**
 * Polls `probe` every `pollMs` until it and the ready line both say ready; the exit, the time-out and the
 * caller's abort end the wait first. Leaves no timer or listener behind.
 */
export async function waitReady(options: ReadinessOptions): Promise<ReadinessOutcome> {
  const clock = options.clock ?? realClock;
  const { signal } = options;
  const watch = new AbortController();
  const healthy = (async (): Promise<void> => {
    while (!watch.signal.aborted) {
      if (await options.probe(watch.signal)) return;
      await clock.sleep(options.pollMs, watch.signal);
    }
    return new Promise<void>(() => undefined); // stopped: never a verdict
  })();
  let onAbort: () => void = () => undefined;
  try {
    return await Promise.race<ReadinessOutcome>([
      Promise.all([healthy, options.readyLine]).then(() => 'ready' as const),
      options.exited.then(() => 'exit' as const),
      clock.sleep(options.timeoutMs, watch.signal).then(() => 'timeout' as const),
      new Promise<ReadinessOutcome>((resolve) => {
        onAbort = () => resolve('abort');
        if (signal?.aborted) onAbort();
        else signal?.addEventListener('abort', onAbort, { once: true });
      }),
    ]);
  } finally {
    watch.abort();
    signal?.removeEventListener('abort', onAbort);
  }
}
