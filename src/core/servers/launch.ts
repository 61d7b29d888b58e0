import { setImmediate as nextLoopTurn } from 'node:timers/promises';
import type { ServerConfig } from '../../shared/config.js';
import type { RunEvent } from '../../shared/events.js';
import { failureFromExit } from './failures.js';
import { discoverModels, discoverVersion, httpGet } from './http-probe.js';
import { prepareLaunch, type PrepareOptions, type PreparedLaunch } from './launch-prepare.js';
import { logFactsReader } from './log-facts.js';
import { ManagedProcess, type ProcessExit } from './managed-process.js';
import type { StopGrace } from './process-group.js';
import { waitReady, type ReadinessOutcome } from './readiness.js';
import { abortError, failStart } from './server-errors.js';
import type { RunningServer, ServerFailure, StartServerOptions } from './types.js';

type Emit = (event: RunEvent) => void;

/** What a launch needs of the manager: its collaborators, knobs and the set of servers it owns. */
export interface LaunchDeps extends PrepareOptions {
  fetch: typeof fetch;
  grace: StopGrace;
  pollMs: number;
  tailLines: number;
  running: Set<RunningServer>;
}

/** One launched server's watch: its death while serving, its idempotent stop, its process once spawned. */
class Watch {
  failure: ServerFailure | null = null;
  proc: ManagedProcess | undefined = undefined;
  server: RunningServer | undefined = undefined;
  private deathSettled: Promise<void> | undefined;
  private stopPromise: Promise<void> | undefined;
  private resolveDied: (failure: ServerFailure) => void = () => undefined;
  readonly died = new Promise<ServerFailure>((resolve) => {
    this.resolveDied = resolve;
  });

  constructor(
    private readonly config: ServerConfig,
    private readonly p: PreparedLaunch,
    private readonly running: Set<RunningServer>,
  ) {}

  /** An exit while serving is a death: `died` resolves there and then, reaping and the full report follow. */
  onDeath(proc: ManagedProcess, exit: ProcessExit): void {
    this.p.lifecycle.to('reaping');
    const early = failureFromExit(this.config.engine, proc.tail(), exit, 'run');
    this.failure = early;
    this.resolveDied(early);
    this.deathSettled = (async () => {
      await proc.reap();
      this.forget();
      Object.assign(early, failureFromExit(this.config.engine, proc.tail(), exit, 'run'));
      this.p.lifecycle.to('failed', `${early.message}; fix: ${early.fix}`);
    })();
  }

  /** Stops the server; a server that died is only waited for. Idempotent. */
  readonly stop = (): Promise<void> => {
    this.stopPromise ??= (async () => {
      if (this.deathSettled) return this.deathSettled;
      const proc = this.proc;
      if (!proc) return;
      // Exited during start-up: the start's failure path reports it; stop only waits for the reaping.
      if (!this.p.lifecycle.can('stopping')) return proc.reap();
      this.p.lifecycle.to('stopping');
      await proc.reap();
      this.forget();
      this.p.lifecycle.to('stopped');
    })();
    return this.stopPromise;
  };

  forget(): void {
    if (this.server) this.running.delete(this.server);
  }
}

/** Starts the engine's process group, its log read for facts and the ready line; null when it cannot run. */
async function spawn(p: PreparedLaunch, watch: Watch, deps: LaunchDeps, emit: Emit, onReadyLine: () => void) {
  const readLogFacts = logFactsReader(p.adapter, p.info, emit);
  p.lifecycle.to('launching', p.command);
  return ManagedProcess.start({
    command: p.plan.command,
    args: p.plan.args,
    env: p.childEnv,
    logFile: p.info.logFile as string,
    header: `# servebench: ${p.command}`,
    redact: p.redactLine,
    tailLines: deps.tailLines,
    grace: deps.grace,
    nodePath: deps.nodePath,
    onLine: (line, stream) => {
      emit({ type: 'server-log', line, stream });
      readLogFacts(line);
      if (p.adapter.readyLine?.test(line)) onReadyLine();
    },
    onExit: (exit) => {
      if (p.lifecycle.state === 'ready' && watch.proc) watch.onDeath(watch.proc, exit);
    },
    onOwnerSignal: watch.stop,
    onEscalate: (sig, afterMs) =>
      emit({
        type: 'message',
        severity: 'warn',
        text: `${p.adapter.description.name} (process group ${p.info.pid}) still running ${afterMs >= 1000 ? `${Math.round(afterMs / 1000)} s` : `${afterMs} ms`} after the previous signal: sending ${sig}`,
      }),
  });
}

/** Ends a start that did not become ready: stopped or reaped, then the failure (or the abort) thrown. */
async function startFailed(
  o: Exclude<ReadinessOutcome, 'ready'>,
  ctx: { config: ServerConfig; p: PreparedLaunch; watch: Watch; live: ManagedProcess; signal?: AbortSignal },
): Promise<never> {
  const { config, p, watch, live } = ctx;
  if (o === 'abort') {
    await watch.stop();
    throw abortError(ctx.signal as AbortSignal);
  }
  if (o === 'timeout') {
    await watch.stop();
    return failStart(p.lifecycle, {
      kind: 'timeout',
      message: `${p.adapter.description.name} was not ready within ${Math.round(config.startTimeoutMs / 1000)} s`,
      fix: 'a big model can take long to load: raise --start-timeout; else read server.log for where it stalled',
      logTail: live.tail(30),
    });
  }
  if (!p.lifecycle.can('reaping')) {
    // Stopped on request while loading (stopAll at quit): the stop reaps and reports; the start still fails.
    await watch.stop();
    return failStart(p.lifecycle, failureFromExit(config.engine, live.tail(), await live.exited, 'start'));
  }
  p.lifecycle.to('reaping');
  const exit = await live.exited;
  await live.reap();
  watch.forget();
  return failStart(p.lifecycle, failureFromExit(config.engine, live.tail(), exit, 'start'));
}

/** The facts a ready server gives over HTTP that the plan and the log did not: its model, its version. */
async function askServer(p: PreparedLaunch, config: ServerConfig, fetchFn: typeof fetch): Promise<void> {
  const info = p.info;
  if (!info.model) {
    const models = await discoverModels(fetchFn, info.baseUrl);
    info.model = models[0] ?? config.model ?? '';
  }
  if (!info.engineVersion && p.adapter.versionFromServer) {
    const version = await discoverVersion(fetchFn, info.baseUrl);
    if (version) info.engineVersion = version;
  }
}

/**
 * Launches a server as its engine module plans it and waits until it is ready: /health 200 (and the ready line),
 * or an exit, the time-out or an abort, each of which fails the start leaving nothing behind.
 */
export async function launchServer(
  config: ServerConfig,
  opts: StartServerOptions,
  deps: LaunchDeps,
  emit: Emit,
): Promise<RunningServer> {
  const p = await prepareLaunch(config, opts, deps, emit);
  const watch = new Watch(config, p, deps.running);
  let onReadyLine: () => void = () => undefined;
  const readyLine = new Promise<void>((resolve) => {
    if (p.adapter.readyLine === undefined) resolve();
    onReadyLine = resolve;
  });
  const started = await spawn(p, watch, deps, emit, () => onReadyLine());
  if (!(started instanceof ManagedProcess)) {
    return failStart(p.lifecycle, {
      kind: 'engine-missing',
      message: `cannot run '${p.plan.command}' (${started.code})`,
      fix: p.adapter.spawnFix,
      logTail: [],
    });
  }
  const live: ManagedProcess = started;
  watch.proc = live;
  p.info.pid = live.pid;
  const server: RunningServer = {
    info: p.info,
    died: watch.died,
    get exited() {
      return watch.failure !== null;
    },
    hasDied: () => watch.failure,
    stop: watch.stop,
    logTail: (lines = 50) => live.tail(lines),
  };
  watch.server = server;
  deps.running.add(server);

  const healthPath = p.plan.healthPath ?? p.adapter.healthPath;
  const url = `${p.info.baseUrl}${healthPath}`;
  p.lifecycle.to('loading', `waiting for ${url}`);
  const outcome = await waitReady({
    probe: async (signal) => (await httpGet(deps.fetch, url, { signal })).status === 200,
    readyLine,
    exited: live.exited,
    timeoutMs: config.startTimeoutMs,
    pollMs: deps.pollMs,
    signal: opts.signal,
  });
  const failed = { config, p, watch, live, signal: opts.signal };
  // A ready verdict that raced with an exit is no verdict.
  if (outcome === 'ready' && live.exit) return startFailed('exit', failed);
  if (outcome !== 'ready') return startFailed(outcome, failed);

  // Log lines written before /health answered may sit in the same I/O batch as the answer: let the
  // loop finish that batch so the facts they carry (KV cache, maximum concurrency) are in info.
  await nextLoopTurn();
  await nextLoopTurn();
  await askServer(p, config, deps.fetch);
  // An exit up to here fails the start; from here on (no await in between) it is a death while serving.
  // A stop asked for meanwhile (stopAll at quit) ends the start as the exit it causes.
  if (live.exit || !p.lifecycle.can('ready')) return startFailed('exit', failed);
  const name = p.adapter.description.name;
  p.lifecycle.to(
    'ready',
    `${name} ${p.info.engineVersion ?? ''} at ${p.info.baseUrl} serving ${p.info.model}`.replace(/\s+/g, ' '),
  );
  return server;
}
