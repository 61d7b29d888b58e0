import type { RunEvent } from '../../shared/events.js';
import { engineFor } from './engines/index.js';
import { DEFAULT_GRACE, type StopGrace } from './process-group.js';
import { attachServer } from './attach-server.js';
import { launchServer, type LaunchDeps } from './launch.js';
import type { RunningServer, StartServer } from './types.js';

/** Collaborators and knobs of the server lifecycle (tests pass small grace periods and fakes). */
export interface ServerManagerOptions {
  fetch?: typeof fetch;
  /** servebench CLI script for the sim (default: dist/cli.js of the package). */
  cliScript?: string;
  /** Node binary for the sim (default: process.execPath). */
  nodePath?: string;
  grace?: Partial<StopGrace>;
  /** Interval of the readiness polls. */
  pollMs?: number;
  /** attach: how long a server may refuse connections before it counts as unreachable. */
  attachConnectTimeoutMs?: number;
  /** Time-out of the engine's import probe and its --help. */
  probeTimeoutMs?: number;
  /** Environment the engine inherits (default process.env); config.env is laid over it. */
  env?: NodeJS.ProcessEnv;
  /** Log lines kept in memory for failure reports and logTail(). */
  tailLines?: number;
}

/** Launches, watches and stops servers; stopAll() is for app quit. */
export interface ServerManager {
  start: StartServer;
  stopAll(): Promise<void>;
  /** Servers started by this manager and not yet stopped. */
  readonly running: ReadonlySet<RunningServer>;
}

type Emit = (event: RunEvent) => void;

export { normalizeBaseUrl } from './http-probe.js';

/** Creates a server manager: the one owner of every engine process it starts. */
export function createServerManager(options: ServerManagerOptions = {}): ServerManager {
  const running = new Set<RunningServer>();
  const deps: LaunchDeps = {
    ...options,
    fetch: options.fetch ?? globalThis.fetch,
    grace: { ...DEFAULT_GRACE, ...options.grace },
    pollMs: options.pollMs ?? 500,
    tailLines: options.tailLines ?? 500,
    running,
  };

  const start: StartServer = async (config, opts) => {
    const emit: Emit = opts.onEvent ?? (() => undefined);
    if (!engineFor(config.engine).launches) {
      return attachServer(config, opts, emit, {
        fetch: deps.fetch,
        pollMs: deps.pollMs,
        connectTimeoutMs: options.attachConnectTimeoutMs ?? 5_000,
      });
    }
    return launchServer(config, opts, deps, emit);
  };

  return {
    start,
    running,
    async stopAll() {
      await Promise.all([...running].map((s) => s.stop()));
    },
  };
}

let defaultManager: ServerManager | undefined;

/** Launches (vllm, sglang, sim) or attaches to a server; the returned server must be stopped by its owner. */
export const startServer: StartServer = (config, options) => {
  defaultManager ??= createServerManager();
  return defaultManager.start(config, options);
};

/** Stops every server started through startServer (app quit, Ctrl-C). */
export async function stopAllServers(): Promise<void> {
  await defaultManager?.stopAll();
}
