import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setImmediate as nextLoopTurn } from 'node:timers/promises';
import type { ServerConfig } from '../../shared/config.js';
import type { RunEvent } from '../../shared/events.js';
import { modelProblem } from '../../shared/engines.js';
import { LaunchSettingsSchema } from '../../shared/server-settings.js';
import { UserError } from '../errors.js';
import { abortError, failStart, ServerConfigError } from './server-errors.js';
import { engineFor, formatCommand, type EngineModule, type LaunchPlan } from './engines/index.js';
import { failureFromExit } from './failures.js';
import { findCliScript } from '../package-root.js';
import { baseUrlFor } from './ports.js';
import { checkEngine, choosePort } from './preflight.js';
import { logFactsReader } from './log-facts.js';
import { DEFAULT_GRACE, type StopGrace } from './process-group.js';
import { createRedactor, redactArgv } from './redact.js';
import { attachServer } from './attach-server.js';
import { discoverModels, discoverVersion, httpGet } from './http-probe.js';
import { LAUNCH_TRANSITIONS, Lifecycle } from './lifecycle-state.js';
import { ManagedProcess, type ProcessExit } from './managed-process.js';
import { waitReady, type ReadinessOutcome } from './readiness.js';
import type { RunningServer, ServerFailure, ServerInfo, StartServer, StartServerOptions } from './types.js';

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
  const fetchFn = options.fetch ?? globalThis.fetch;
  const grace: StopGrace = { ...DEFAULT_GRACE, ...options.grace };
  const pollMs = options.pollMs ?? 500;
  const tailMax = options.tailLines ?? 500;
  const running = new Set<RunningServer>();

  async function launch(config: ServerConfig, opts: StartServerOptions, emit: Emit): Promise<RunningServer> {
    const adapter: EngineModule = engineFor(config.engine);
    const signal = opts.signal;
    const parentEnv = options.env ?? process.env;
    const where = LaunchSettingsSchema.parse(config);
    const childEnv: NodeJS.ProcessEnv = { ...parentEnv, ...where.env };
    const redactLine = createRedactor(config, parentEnv);
    const throwIfAborted = (): void => {
      if (signal?.aborted) throw abortError(signal);
    };
    throwIfAborted();
    const displayName = adapter.description.name;
    const noModel = modelProblem(config.engine, config.model);
    if (noModel) throw new ServerConfigError(noModel);
    const lifecycle = new Lifecycle(LAUNCH_TRANSITIONS, emit);
    lifecycle.to('checking', `checking ${displayName}`);
    await mkdir(opts.runDir, { recursive: true });
    const port = await choosePort(where, lifecycle);
    throwIfAborted();
    const engineVersion = await checkEngine(config, adapter, {
      env: childEnv,
      signal,
      timeoutMs: options.probeTimeoutMs,
      redactLine,
      lifecycle,
      emit,
    });

    // servebench's own CLI, for an engine that runs it (the simulator): found when the plan asks for it.
    const cliScript = (): string => {
      const script = options.cliScript ?? findCliScript();
      if (!script) throw new UserError('the simulator needs the built CLI (dist/cli.js): run `npm run build:cli`');
      return script;
    };
    let plan: LaunchPlan;
    try {
      plan = adapter.plan(config, {
        host: where.host,
        port,
        runDir: opts.runDir,
        maxConcurrency: opts.maxConcurrency,
        cliScript,
        nodePath: options.nodePath ?? process.execPath,
      });
    } catch (error) {
      if (error instanceof UserError) throw error;
      throw new ServerConfigError((error as Error).message);
    }
    for (const file of plan.files) await writeFile(file.path, file.content);
    for (const text of plan.messages) emit({ type: 'message', severity: 'info', text });
    for (const text of opts.largestRequest ? (adapter.preRunWarnings?.(config, opts.largestRequest) ?? []) : [])
      emit({ type: 'message', severity: 'warn', text });
    throwIfAborted();

    const baseUrl = baseUrlFor(where.host, port);
    const command = redactLine(formatCommand(plan.command, redactArgv(plan.args)));
    const logFile = join(opts.runDir, 'server.log');
    const info: ServerInfo = {
      engine: config.engine,
      baseUrl,
      model: plan.model ?? '',
      simulated: adapter.simulated === true,
      command,
      logFile,
      ...(engineVersion ? { engineVersion } : {}),
      ...(adapter.metricsPath ? { metricsUrl: `${baseUrl}${adapter.metricsPath}` } : {}),
      ...(plan.gpuStateFile ? { gpuStateFile: plan.gpuStateFile } : {}),
      ...(plan.messages.length > 0 ? { notes: plan.messages } : {}),
    };
    const readLogFacts = logFactsReader(adapter, info, emit);
    let onReadyLine: () => void = () => undefined;
    const readyLine = new Promise<void>((resolve) => {
      if (adapter.readyLine === undefined) resolve();
      onReadyLine = resolve;
    });

    // ---- an exit while serving is a death: `died` resolves there and then, reaping and the full report follow ----
    let failure: ServerFailure | null = null;
    let deathSettled: Promise<void> | undefined;
    let resolveDied: (failure: ServerFailure) => void = () => undefined;
    const died = new Promise<ServerFailure>((resolve) => {
      resolveDied = resolve;
    });
    const onDeath = (proc: ManagedProcess, exit: ProcessExit): void => {
      lifecycle.to('reaping');
      const early = failureFromExit(config.engine, proc.tail(), exit, 'run');
      failure = early;
      resolveDied(early);
      deathSettled = (async () => {
        await proc.reap();
        running.delete(server);
        Object.assign(early, failureFromExit(config.engine, proc.tail(), exit, 'run'));
        lifecycle.to('failed', `${early.message}; fix: ${early.fix}`);
      })();
    };

    // ---- stop: idempotent; a server that died is only waited for ----
    let proc: ManagedProcess | undefined = undefined; // set once spawned (stop() is reachable only from then on)
    let stopPromise: Promise<void> | undefined;
    const stop = (): Promise<void> => {
      stopPromise ??= (async () => {
        if (deathSettled) return deathSettled;
        if (!proc) return;
        // Exited during start-up: the start's failure path reports it; stop only waits for the reaping.
        if (!lifecycle.can('stopping')) return proc.reap();
        lifecycle.to('stopping');
        await proc.reap();
        running.delete(server);
        lifecycle.to('stopped');
      })();
      return stopPromise;
    };

    lifecycle.to('launching', command);
    const started = await ManagedProcess.start({
      command: plan.command,
      args: plan.args,
      env: childEnv,
      logFile,
      header: `# servebench: ${command}`,
      redact: redactLine,
      tailLines: tailMax,
      grace,
      nodePath: options.nodePath,
      onLine: (line, stream) => {
        emit({ type: 'server-log', line, stream });
        readLogFacts(line);
        if (adapter.readyLine?.test(line)) onReadyLine();
      },
      onExit: (exit) => {
        if (lifecycle.state === 'ready' && proc) onDeath(proc, exit);
      },
      onOwnerSignal: stop,
      onEscalate: (sig, afterMs) =>
        emit({
          type: 'message',
          severity: 'warn',
          text: `${displayName} (process group ${info.pid}) still running ${afterMs >= 1000 ? `${Math.round(afterMs / 1000)} s` : `${afterMs} ms`} after the previous signal: sending ${sig}`,
        }),
    });
    if (!(started instanceof ManagedProcess)) {
      return failStart(lifecycle, {
        kind: 'engine-missing',
        message: `cannot run '${plan.command}' (${started.code})`,
        fix: adapter.spawnFix,
        logTail: [],
      });
    }
    const live: ManagedProcess = started;
    proc = live;
    info.pid = live.pid;

    const server: RunningServer = {
      info,
      died,
      get exited() {
        return failure !== null;
      },
      hasDied: () => failure,
      stop,
      logTail: (lines = 50) => live.tail(lines),
    };
    running.add(server);

    // ---- wait for readiness: /health 200 (and the ready line), or exit, time-out, abort ----
    const healthPath = plan.healthPath ?? adapter.healthPath;
    lifecycle.to('loading', `waiting for ${baseUrl}${healthPath}`);
    const outcome = await waitReady({
      probe: async (watch) => (await httpGet(fetchFn, `${baseUrl}${healthPath}`, { signal: watch })).status === 200,
      readyLine,
      exited: live.exited,
      timeoutMs: config.startTimeoutMs,
      pollMs,
      signal,
    });

    async function startFailed(o: Exclude<ReadinessOutcome, 'ready'>): Promise<never> {
      if (o === 'abort') {
        await stop();
        throw abortError(signal as AbortSignal);
      }
      if (o === 'timeout') {
        await stop();
        return failStart(lifecycle, {
          kind: 'timeout',
          message: `${displayName} was not ready within ${Math.round(config.startTimeoutMs / 1000)} s`,
          fix: 'a big model can take long to load: raise --start-timeout; else read server.log for where it stalled',
          logTail: live.tail(30),
        });
      }
      if (!lifecycle.can('reaping')) {
        // Stopped on request while loading (stopAll at quit): the stop reaps and reports; the start still fails.
        await stop();
        return failStart(lifecycle, failureFromExit(config.engine, live.tail(), await live.exited, 'start'));
      }
      lifecycle.to('reaping');
      const exit = await live.exited;
      await live.reap();
      running.delete(server);
      return failStart(lifecycle, failureFromExit(config.engine, live.tail(), exit, 'start'));
    }

    // A ready verdict that raced with an exit is no verdict.
    if (outcome === 'ready' && live.exit) return startFailed('exit');
    if (outcome !== 'ready') return startFailed(outcome);

    // ---- ready ----
    // Log lines written before /health answered may sit in the same I/O batch as the answer: let the
    // loop finish that batch so the facts they carry (KV cache, maximum concurrency) are in info.
    await nextLoopTurn();
    await nextLoopTurn();
    if (!info.model) {
      const models = await discoverModels(fetchFn, baseUrl);
      info.model = models[0] ?? config.model ?? '';
    }
    if (!info.engineVersion && adapter.versionFromServer) {
      const version = await discoverVersion(fetchFn, baseUrl);
      if (version) info.engineVersion = version;
    }
    // An exit up to here fails the start; from here on (no await in between) it is a death while serving.
    // A stop asked for meanwhile (stopAll at quit) ends the start as the exit it causes.
    if (live.exit || !lifecycle.can('ready')) return startFailed('exit');
    lifecycle.to(
      'ready',
      `${displayName} ${info.engineVersion ?? ''} at ${baseUrl} serving ${info.model}`.replace(/\s+/g, ' '),
    );
    return server;
  }

  const start: StartServer = async (config, opts) => {
    const emit: Emit = opts.onEvent ?? (() => undefined);
    if (!engineFor(config.engine).launches) {
      return attachServer(config, opts, emit, {
        fetch: fetchFn,
        pollMs,
        connectTimeoutMs: options.attachConnectTimeoutMs ?? 5_000,
      });
    }
    return launch(config, opts, emit);
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
