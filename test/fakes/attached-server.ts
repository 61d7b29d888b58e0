import type { RunningServer, ServerInfo, StartServer } from '../../src/core/servers/types.js';

/** A server the run attaches to and never stops: it never dies, and `stop` (default nothing) is the caller's. */
export function attachedServer(info: ServerInfo, stop: () => Promise<void> = async () => undefined): RunningServer {
  return {
    info,
    died: new Promise(() => undefined),
    exited: false,
    hasDied: () => null,
    stop,
    logTail: () => [],
  };
}

/** Attaches every run to the server already listening at `url` (a simulator or a fake), as model `model`. */
export function attachTo(url: string, info: Partial<ServerInfo> = {}): StartServer {
  return async () => attachedServer({ engine: 'attach', baseUrl: url, model: 'sim-model', simulated: true, ...info });
}
