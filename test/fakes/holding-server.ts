import type { ServerConfig } from '../../src/shared/config.js';
import type { RunningServer, StartServer, StartServerOptions } from '../../src/core/servers/types.js';

/**
 * A server start that never becomes ready: it says `lines` as the engine's log (raw, as a careless
 * engine echoes its arguments) and holds until the run is cancelled. Keeps a run "in progress" for as
 * long as a test needs, without timing.
 */
export function holdingServer(lines: string[] = []): StartServer & { starts: number } {
  const state = { starts: 0 };
  const start = async (_config: ServerConfig, options: StartServerOptions): Promise<RunningServer> => {
    state.starts++;
    for (const line of lines) options.onEvent?.({ type: 'server-log', line, stream: 'stdout' });
    await new Promise<void>((resolve) => {
      if (options.signal?.aborted) resolve();
      options.signal?.addEventListener('abort', () => resolve(), { once: true });
    });
    throw new DOMException('cancelled while starting', 'AbortError');
  };
  return Object.defineProperty(start, 'starts', { get: () => state.starts }) as StartServer & { starts: number };
}
