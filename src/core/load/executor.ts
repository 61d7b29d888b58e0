import { setMaxListeners } from 'node:events';
import type { Clock } from '../clock.js';
import { createStreamClient } from './stream-client.js';
import type { RequestOutcome, RequestSpec } from './stream-client.js';

/** Runs requests somewhere (this thread or worker threads); the scheduler cannot tell which. */
export interface RequestExecutor {
  execute(spec: RequestSpec): Promise<RequestOutcome>;
  /** Ends every in-flight request at once (cancel, server died); later requests run normally. */
  abortAll(): void;
  close(): Promise<void>;
  readonly threads: number;
}

export interface ExecutorOptions {
  baseUrl: string;
  apiKey?: string;
  clock: Clock;
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
  return {
    threads: 0,
    execute: (spec) => client.send(spec, controller.signal),
    abortAll() {
      controller.abort();
      controller = newController();
    },
    close: () => client.close(),
  };
}
