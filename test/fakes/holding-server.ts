import type { StartServer } from '../../src/core/servers/types.js';

/**
 * A server start that never becomes ready: it says `lines` as the engine's log (raw, as a careless
 * engine echoes its arguments) and holds until the run is cancelled. Keeps a run "in progress" for as
 * long as a test needs, without timing.
 */
export function holdingServer(lines: string[] = []): StartServer & { starts: number } {
  const start = (async (_config, options) => {
    start.starts++;
    for (const line of lines) options.onEvent?.({ type: 'server-log', line, stream: 'stdout' });
    await new Promise<void>((resolve) => {
      if (options.signal?.aborted) resolve();
      options.signal?.addEventListener('abort', () => resolve(), { once: true });
    });
    throw new DOMException('cancelled while starting', 'AbortError');
  }) as StartServer & { starts: number };
  start.starts = 0;
  return start;
}
