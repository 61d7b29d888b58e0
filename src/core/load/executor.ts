import { setMaxListeners } from 'node:events';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { IntervalHistogram } from 'node:perf_hooks';
import type { Clock } from '../clock.js';
import { createStreamClient } from './stream-client.js';
import type { AbortReason, RequestOutcome, RequestSpec } from './stream-client.js';

/** Runs requests somewhere (this thread or worker threads); the scheduler cannot tell which. */
export interface RequestExecutor {
  /**
   * Sends one request and resolves once its reads are parsed. `onEnded` is called once, the moment the response
   * ended on the wire (or the request failed), before that parsing: a closed-loop lane refills its slot then.
   */
  execute(spec: RequestSpec, onEnded?: () => void): Promise<RequestOutcome>;
  /** Ends every in-flight request at once (cancel, server died); later requests run normally. */
  abortAll(reason?: AbortReason): void;
  /** Starts measuring event-loop lag on every thread that sends requests. */
  startLagWindow(): void;
  /** p99 event-loop lag (ms, timer resolution removed) since startLagWindow, worst thread; null if unknown. */
  endLagWindow(): Promise<number | null>;
  close(): Promise<void>;
  readonly threads: number;
}

export interface ExecutorOptions {
  baseUrl: string;
  apiKey?: string;
  clock: Clock;
}

/** Event-loop lag over a window, on the calling thread: the client must not be the bottleneck. */
export function createLagWindow(): { start(): void; end(): number | null } {
  const RESOLUTION_MS = 10;
  let histogram: IntervalHistogram | null = null;
  return {
    start() {
      histogram?.disable();
      histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
      histogram.enable();
    },
    end() {
      if (!histogram) return null;
      histogram.disable();
      const h = histogram;
      histogram = null;
      // Each sample is the whole timer interval; the lag is what exceeds the resolution.
      return h.count > 0 ? Math.max(0, h.percentile(99) / 1e6 - RESOLUTION_MS) : null;
    },
  };
}

/** Sends requests from the calling thread's event loop. */
export function createInThreadExecutor(options: ExecutorOptions): RequestExecutor {
  const client = createStreamClient({ baseUrl: options.baseUrl, apiKey: options.apiKey, clock: options.clock });
  // One abort signal is shared by every in-flight request (hundreds at high concurrency).
  const newController = (): AbortController => {
    const c = new AbortController();
    setMaxListeners(0, c.signal);
    return c;
  };
  let controller = newController();
  const lag = createLagWindow();
  return {
    threads: 0,
    execute: (spec, onEnded) => client.send(spec, controller.signal, onEnded),
    abortAll(reason?: AbortReason) {
      controller.abort(reason);
      controller = newController();
    },
    startLagWindow: () => lag.start(),
    endLagWindow: async () => lag.end(),
    close: () => client.close(),
  };
}
