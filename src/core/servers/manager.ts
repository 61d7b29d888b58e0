import { spawn } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { setImmediate as nextLoopTurn } from 'node:timers/promises';
import type { ServerConfig } from '../../shared/config.js';
import type { RunEvent } from '../../shared/events.js';
import { modelProblem } from '../../shared/engines.js';
import { UserError } from '../errors.js';
import { ServerConfigError, ServerStartError } from './server-errors.js';
import { engineFor, formatCommand, type EngineModule, type LaunchPlan } from './engines/index.js';
import { parseQuantizationChoices, probeEngine, readEngineHelp, runCapture } from './engine-probe.js';
import { failureFromExit } from './failures.js';
import { findCliScript } from '../package-root.js';
import { baseUrlFor, pickFreePort, probePort } from './ports.js';
import { DEFAULT_GRACE, startWatchdog, stopGroup, trackGroup, type StopGrace } from './process-group.js';
import { createRedactor, redactArgv } from './redact.js';
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

const delay = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });

function abortError(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('The operation was aborted.', 'AbortError');
}

interface HttpResult {
  status?: number;
  code?: string;
  body?: string;
}

async function httpGet(
  fetchFn: typeof fetch,
  url: string,
  options: { timeoutMs?: number; signal?: AbortSignal; apiKey?: string; body?: boolean } = {},
): Promise<HttpResult> {
  const signals = [AbortSignal.timeout(options.timeoutMs ?? 3_000)];
  if (options.signal) signals.push(options.signal);
  try {
    const res = await fetchFn(url, {
      signal: AbortSignal.any(signals),
      headers: options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {},
    });
    const body = options.body ? await res.text() : undefined;
    if (!options.body) await res.body?.cancel().catch(() => undefined);
    return { status: res.status, body };
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    const name = (error as { name?: string }).name;
    // fetch refuses the "bad ports" of the Fetch standard (e.g. 9, 6000) without trying to connect.
    if (cause?.message === 'bad port')
      return { code: 'a port that fetch refuses to connect to: serve on another port' };
    return { code: cause?.code ?? (name === 'TimeoutError' || name === 'AbortError' ? 'ETIMEDOUT' : 'EFETCH') };
  }
}

async function getJson(fetchFn: typeof fetch, url: string, apiKey?: string): Promise<unknown> {
  const res = await httpGet(fetchFn, url, { body: true, apiKey, timeoutMs: 5_000 });
  if (res.status !== 200 || res.body === undefined) return undefined;
  try {
    return JSON.parse(res.body) as unknown;
  } catch {
    return undefined;
  }
}

/** GET /v1/models: the HTTP status and the model ids listed (none when it did not answer 200 with JSON). */
async function listModels(
  fetchFn: typeof fetch,
  baseUrl: string,
  apiKey?: string,
): Promise<{ status?: number; ids: string[] }> {
  const res = await httpGet(fetchFn, `${baseUrl}/v1/models`, { body: true, apiKey, timeoutMs: 5_000 });
  let json: { data?: Array<{ id?: unknown }> } | undefined;
  try {
    json = res.status === 200 && res.body !== undefined ? (JSON.parse(res.body) as typeof json) : undefined;
  } catch {
    json = undefined;
  }
  const data = Array.isArray(json?.data) ? json.data : [];
  const ids = data.map((m) => m?.id).filter((id): id is string => typeof id === 'string');
  return { status: res.status, ids };
}

async function discoverModels(fetchFn: typeof fetch, baseUrl: string, apiKey?: string): Promise<string[]> {
  return (await listModels(fetchFn, baseUrl, apiKey)).ids;
}

const answer = (res: HttpResult): string => (res.status !== undefined ? String(res.status) : (res.code ?? 'no answer'));

/** attach: the URL answers HTTP, but not as an OpenAI-compatible server (wrong port, or a path on another web server). */
function notOpenAiFailure(baseUrl: string, health: HttpResult, models: HttpResult): ServerFailure {
  const seen =
    health.status === 404 && models.status === 404
      ? '/health and /v1/models answer 404'
      : `/health answers ${answer(health)}, /v1/models ${answer(models)}`;
  return {
    kind: 'not-openai',
    message: `nothing OpenAI-compatible at ${baseUrl} (${seen})`,
    fix: 'check --url (host, port, and no /v1 suffix)',
    logTail: [],
  };
}

const apiKeyFailure = (baseUrl: string, status: number): ServerFailure => ({
  kind: 'unreachable',
  message: `${baseUrl} refuses requests without a valid API key (HTTP ${status})`,
  fix: 'pass the server API key (--api-key)',
  logTail: [],
});

async function discoverVersion(fetchFn: typeof fetch, baseUrl: string, apiKey?: string): Promise<string | undefined> {
  const json = (await getJson(fetchFn, `${baseUrl}/version`, apiKey)) as { version?: unknown } | undefined;
  return typeof json?.version === 'string' ? json.version : undefined;
}

/** Base URL of an OpenAI-compatible server from what a user typed (trailing / and /v1 removed). */
export function normalizeBaseUrl(url: string): string {
  return url.replace(/\/+$/, '').replace(/\/v1$/, '');
}

/** Creates a server manager: the one owner of every engine process it starts. */
export function createServerManager(options: ServerManagerOptions = {}): ServerManager {
  const fetchFn = options.fetch ?? globalThis.fetch;
  const grace: StopGrace = { ...DEFAULT_GRACE, ...options.grace };
  const pollMs = options.pollMs ?? 500;
  const tailMax = options.tailLines ?? 500;
  const running = new Set<RunningServer>();

  function fail(emit: Emit, failure: ServerFailure): never {
    emit({ type: 'server-state', state: 'failed', detail: `${failure.message}; fix: ${failure.fix}` });
    throw new ServerStartError(failure);
  }

  async function attach(config: ServerConfig, opts: StartServerOptions, emit: Emit): Promise<RunningServer> {
    if (!config.url) throw new ServerConfigError('attaching to a server needs --url');
    const baseUrl = normalizeBaseUrl(config.url);
    const signal = opts.signal;
    emit({ type: 'server-state', state: 'checking', detail: `waiting for ${baseUrl}` });
    const connectDeadline = Date.now() + (options.attachConnectTimeoutMs ?? 5_000);
    const deadline = Date.now() + config.startTimeoutMs;
    let lastSeen = '';
    for (;;) {
      if (signal?.aborted) throw abortError(signal);
      const health = await httpGet(fetchFn, `${baseUrl}/health`, { signal, apiKey: opts.apiKey });
      if (health.status === 200) break;
      if (health.status === undefined) {
        if (signal?.aborted) throw abortError(signal);
        if (health.code === 'ENOTFOUND' || health.code === 'EAI_AGAIN' || Date.now() >= connectDeadline) {
          fail(emit, {
            kind: 'unreachable',
            message: `nothing answers at ${baseUrl} (${health.code ?? 'no connection'})`,
            fix: 'is the server running? check --url (scheme, host and port)',
            logTail: [],
          });
        }
      } else if (health.status >= 500) {
        // 503 while loading (vLLM, SGLang, TGI): wait.
        lastSeen = `/health answered ${health.status}`;
        emit({ type: 'server-state', state: 'loading', detail: lastSeen });
      } else {
        // No /health (404: Ollama, many proxies) or one behind auth: /v1/models decides.
        const models = await httpGet(fetchFn, `${baseUrl}/v1/models`, { signal, apiKey: opts.apiKey });
        if (models.status === 200) break;
        if (signal?.aborted) throw abortError(signal);
        if (models.status === 401 || models.status === 403) fail(emit, apiKeyFailure(baseUrl, models.status));
        lastSeen = `/health answered ${health.status}, /v1/models ${answer(models)}`;
        if (models.status === undefined || models.status < 500) {
          // Not loading (that is 5xx): another web server, or a wrong path. Both 404: certainly; else after a grace.
          if ((health.status === 404 && models.status === 404) || Date.now() >= connectDeadline) {
            fail(emit, notOpenAiFailure(baseUrl, health, models));
          }
        }
        emit({ type: 'server-state', state: 'loading', detail: lastSeen });
      }
      if (Date.now() >= deadline) {
        fail(emit, {
          kind: 'timeout',
          message: `${baseUrl} was not ready within ${Math.round(config.startTimeoutMs / 1000)} s${lastSeen ? ` (${lastSeen})` : ''}`,
          fix: 'check the server, or allow it longer with --start-timeout',
          logTail: [],
        });
      }
      await delay(pollMs, signal);
    }
    const listed = await listModels(fetchFn, baseUrl, opts.apiKey);
    // vLLM --api-key leaves /health open but guards /v1: without the key every request would fail.
    if (listed.status === 401 || listed.status === 403) fail(emit, apiKeyFailure(baseUrl, listed.status));
    const models = listed.ids;
    const model = config.servedModelName ?? config.model ?? models[0];
    if (!model) {
      fail(emit, {
        kind: 'model-not-found',
        message: `${baseUrl}/v1/models lists no model`,
        fix: 'name the model with --model',
        logTail: [],
      });
    }
    if (models.length > 0 && !models.includes(model)) {
      emit({
        type: 'message',
        severity: 'warn',
        text: `model '${model}' is not among the server's models (${models.join(', ')})`,
      });
    }
    const engineVersion = await discoverVersion(fetchFn, baseUrl, opts.apiKey);
    const metrics = await httpGet(fetchFn, `${baseUrl}/metrics`, { apiKey: opts.apiKey });
    const info: ServerInfo = {
      engine: 'attach',
      baseUrl,
      model,
      simulated: false,
      ...(engineVersion ? { engineVersion } : {}),
      ...(metrics.status === 200 ? { metricsUrl: `${baseUrl}/metrics` } : {}),
    };
    emit({ type: 'server-state', state: 'ready', detail: `${baseUrl} (${model})` });
    return {
      info,
      died: new Promise<ServerFailure>(() => undefined),
      exited: false,
      hasDied: () => null,
      stop: async () => undefined,
      logTail: () => [],
    };
  }

  async function launch(config: ServerConfig, opts: StartServerOptions, emit: Emit): Promise<RunningServer> {
    const adapter: EngineModule = engineFor(config.engine);
    const signal = opts.signal;
    const parentEnv = options.env ?? process.env;
    const childEnv: NodeJS.ProcessEnv = { ...parentEnv, ...config.env };
    const redactLine = createRedactor(config, parentEnv);
    const throwIfAborted = (): void => {
      if (signal?.aborted) throw abortError(signal);
    };
    throwIfAborted();
    const displayName = adapter.description.name;
    const noModel = modelProblem(config.engine, config.model);
    if (noModel) throw new ServerConfigError(noModel);
    emit({ type: 'server-state', state: 'checking', detail: `checking ${displayName}` });
    await mkdir(opts.runDir, { recursive: true });

    // The port: vLLM binds with SO_REUSEPORT and would share a taken port silently, so check it ourselves.
    let port = config.port;
    if (port === 0) {
      port = await pickFreePort(config.host);
    } else {
      const check = await probePort(config.host, port);
      if (!check.free) {
        fail(
          emit,
          check.code === 'EADDRINUSE'
            ? {
                kind: 'port-in-use',
                message: `port ${port} on ${config.host} is already in use`,
                fix: `choose another --port (or omit it to pick a free one), or stop the process that holds it (ss -ltnp 'sport = :${port}')`,
                logTail: [],
              }
            : {
                kind: 'unknown',
                message: `cannot bind ${config.host}:${port} (${check.code})`,
                fix: check.code === 'EACCES' ? 'use a port above 1023' : 'check --host and --port',
                logTail: [],
              },
        );
      }
    }
    throwIfAborted();

    // The engine: installed, which version, and does it know the requested quantization?
    let engineVersion: string | undefined;
    if (adapter.probe) {
      const probe = await probeEngine(config, {
        env: childEnv,
        signal,
        timeoutMs: options.probeTimeoutMs,
      });
      throwIfAborted();
      if (!probe.ok) fail(emit, { ...probe.failure, logTail: probe.failure.logTail.map(redactLine) });
      engineVersion = probe.version;
      emit({
        type: 'message',
        severity: 'info',
        text: `${displayName} ${engineVersion} found (${probe.where})`,
      });
      const needs = adapter.helpRequires?.(config) ?? [];
      if ((config.quantization || needs.length > 0) && adapter.probe.type === 'python') {
        const help = await readEngineHelp(config.python, adapter.probe.helpModule, {
          env: childEnv,
          signal,
          timeoutMs: options.probeTimeoutMs,
          run: runCapture,
        });
        throwIfAborted();
        const choices = help === undefined ? undefined : parseQuantizationChoices(help);
        if (config.quantization && choices && !choices.includes(config.quantization)) {
          throw new ServerConfigError(
            `--quantization '${config.quantization}' is not supported by ${displayName} ${engineVersion}; valid: ${choices.join(', ')}`,
          );
        }
        const missing = help === undefined ? undefined : needs.find((n) => !help.includes(n.flag));
        if (missing)
          throw new ServerConfigError(
            `${displayName} ${engineVersion} has no ${missing.flag} (${missing.why}): upgrade it (${adapter.description.install} -U)`,
          );
        if (config.quantization && !choices) {
          emit({
            type: 'message',
            severity: 'info',
            text: `could not read the quantization methods from ${displayName} --help; passing --quantization ${config.quantization} as is`,
          });
        }
      }
    }

    let cliScript: string | undefined;
    if (config.engine === 'sim') {
      cliScript = options.cliScript ?? findCliScript();
      if (!cliScript) throw new UserError('the simulator needs the built CLI (dist/cli.js): run `npm run build:cli`');
    }
    let plan: LaunchPlan;
    try {
      plan = adapter.plan(config, {
        host: config.host,
        port,
        runDir: opts.runDir,
        maxConcurrency: opts.maxConcurrency,
        cliScript,
        nodePath: options.nodePath,
      });
    } catch (error) {
      throw new ServerConfigError((error as Error).message);
    }
    for (const file of plan.files) await writeFile(file.path, file.content);
    for (const text of plan.messages) emit({ type: 'message', severity: 'info', text });
    for (const text of opts.largestRequest ? (adapter.preRunWarnings?.(config, opts.largestRequest) ?? []) : [])
      emit({ type: 'message', severity: 'warn', text });
    throwIfAborted();

    const baseUrl = baseUrlFor(config.host, port);
    const command = redactLine(formatCommand(plan.command, redactArgv(plan.args)));
    const logFile = join(opts.runDir, 'server.log');
    const log: WriteStream = createWriteStream(logFile, { flags: 'a' });
    let logOpen = true;
    log.on('error', () => {
      logOpen = false;
    });
    log.write(`# servebench: ${command}\n`);

    emit({ type: 'server-state', state: 'launching', detail: command });
    const child = spawn(plan.command, plan.args, { env: childEnv, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const spawned = await new Promise<{ ok: true } | { ok: false; code: string }>((resolve) => {
      child.once('spawn', () => resolve({ ok: true }));
      child.once('error', (error: NodeJS.ErrnoException) => resolve({ ok: false, code: error.code ?? 'ERROR' }));
    });
    if (!spawned.ok || child.pid === undefined) {
      log.end();
      fail(emit, {
        kind: 'engine-missing',
        message: `cannot run '${plan.command}' (${spawned.ok ? 'no pid' : spawned.code})`,
        fix: adapter.spawnFix,
        logTail: [],
      });
    }
    child.on('error', () => undefined); // later errors (e.g. signalling a dead child) are handled by 'exit'
    const pgid = child.pid;

    // ---- log: server.log, events, tail, progress ----
    const tail: string[] = [];
    const info: ServerInfo = {
      engine: config.engine,
      baseUrl,
      model: plan.model ?? '',
      simulated: config.engine === 'sim',
      command,
      pid: pgid,
      logFile,
      ...(engineVersion ? { engineVersion } : {}),
      ...(adapter.metricsPath ? { metricsUrl: `${baseUrl}${adapter.metricsPath}` } : {}),
      ...(plan.gpuStateFile ? { gpuStateFile: plan.gpuStateFile } : {}),
      ...(plan.messages.length > 0 ? { notes: plan.messages } : {}),
    };
    let readyLineSeen = adapter.readyLine === undefined;
    let onReadyLine: () => void = () => undefined;
    const readyLine = new Promise<void>((resolve) => {
      if (readyLineSeen) resolve();
      onReadyLine = resolve;
    });
    let lastProgress = '';
    const onLine = (raw: string, stream: 'stdout' | 'stderr'): void => {
      const line = redactLine(raw);
      if (logOpen) log.write(`${line}\n`);
      tail.push(line);
      if (tail.length > tailMax) tail.splice(0, tail.length - tailMax);
      emit({ type: 'server-log', line, stream });
      for (const p of adapter.progress) {
        const m = line.match(p.pattern);
        if (!m) continue;
        const value = p.value?.(m);
        if (p.key === 'kv-cache' && value !== undefined) info.kvCacheTokens = value;
        if (p.key === 'max-concurrency' && value !== undefined) {
          info.maxConcurrency = value;
          const tokens = p.perRequestTokens?.(m);
          if (tokens !== undefined && tokens > 0) info.maxConcurrencyTokens = tokens;
          else delete info.maxConcurrencyTokens;
        }
        if (p.key === 'max-running-requests' && value !== undefined) {
          info.maxRunningRequests = value;
          if (info.maxConcurrency === undefined) info.maxConcurrency = value;
        }
        const message = p.message(m);
        // Engines print some milestones twice (uvicorn and the app both announce the HTTP server): say it once.
        if (message === lastProgress) continue;
        lastProgress = message;
        emit({ type: 'server-progress', key: p.key, message, ...(value !== undefined ? { value } : {}) });
      }
      if (!readyLineSeen && adapter.readyLine?.test(line)) {
        readyLineSeen = true;
        onReadyLine();
      }
    };
    createInterface({ input: child.stdout, crlfDelay: Infinity }).on('line', (l) => onLine(l, 'stdout'));
    createInterface({ input: child.stderr, crlfDelay: Infinity }).on('line', (l) => onLine(l, 'stderr'));

    // ---- exit: known at once. While serving, an exit nobody asked for is a death: `died` resolves there and then ----
    type Exit = { code: number | null; signal: NodeJS.Signals | null };
    let exitInfo: Exit | undefined;
    let serving = false;
    let stopping = false;
    let failure: ServerFailure | null = null;
    let deathSettled: Promise<void> | undefined;
    let resolveExited: (exit: Exit) => void = () => undefined;
    const exited = new Promise<Exit>((resolve) => {
      resolveExited = resolve;
    });
    let resolveDied: (failure: ServerFailure) => void = () => undefined;
    const died = new Promise<ServerFailure>((resolve) => {
      resolveDied = resolve;
    });
    const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
    child.once('exit', (code, sig) => {
      exitInfo = { code, signal: sig };
      if (serving && !stopping) onDeath(exitInfo);
      resolveExited(exitInfo);
    });

    // ---- stop: SIGINT, SIGTERM, SIGKILL on the whole group; idempotent ----
    let stopPromise: Promise<void> | undefined;
    let reaping: Promise<void> | undefined;
    let untrack: () => void = () => undefined;
    const reap = (): Promise<void> =>
      (reaping ??= (async () => {
        await stopGroup(pgid, grace, (sig, afterMs) =>
          emit({
            type: 'message',
            severity: 'warn',
            text: `${displayName} (process group ${pgid}) still running ${afterMs >= 1000 ? `${Math.round(afterMs / 1000)} s` : `${afterMs} ms`} after the previous signal: sending ${sig}`,
          }),
        );
        // Output pipes close once every process holding them is gone; a process that left the group could hold them.
        const pipesGrace = new AbortController();
        await Promise.race([closed, delay(2_000, pipesGrace.signal)]);
        pipesGrace.abort();
        if (logOpen) {
          logOpen = false;
          await new Promise<void>((resolve) => log.end(resolve));
        }
        untrack();
      })());
    const stop = (): Promise<void> => {
      stopPromise ??= (async () => {
        // Died while serving: the exit watch reaps and reports ('failed'); wait for it, there is nothing to stop.
        if (deathSettled) return deathSettled;
        stopping = true;
        emit({ type: 'server-state', state: 'stopping' });
        await reap();
        running.delete(server);
        emit({ type: 'server-state', state: 'stopped' });
      })();
      return stopPromise;
    };
    // Exit hooks do not run when this process is SIGKILLed (OOM killer): a watchdog stops the group then.
    const watchdog = startWatchdog(pgid, { nodePath: options.nodePath, graceMs: grace.terminateMs });
    const untrackGroup = trackGroup(pgid, stop);
    untrack = () => {
      untrackGroup();
      watchdog.standDown();
    };

    /** The server exited while in use: resolve `died` now, reap and complete the failure (late log lines) after. */
    function onDeath(exit: Exit): void {
      stopping = true;
      const early = failureFromExit(config.engine, tail, exit, 'run');
      failure = early;
      resolveDied(early);
      deathSettled = (async () => {
        await reap();
        running.delete(server);
        Object.assign(early, failureFromExit(config.engine, tail, exit, 'run'));
        emit({ type: 'server-state', state: 'failed', detail: `${early.message}; fix: ${early.fix}` });
      })();
    }

    const server: RunningServer = {
      info,
      died,
      get exited() {
        return failure !== null;
      },
      hasDied: () => failure,
      stop,
      logTail: (lines = 50) => tail.slice(-lines),
    };
    running.add(server);

    // ---- wait for readiness: /health 200 (and the ready line), or exit, time-out, abort ----
    const healthPath = plan.healthPath ?? adapter.healthPath;
    emit({ type: 'server-state', state: 'loading', detail: `waiting for ${baseUrl}${healthPath}` });
    const watch = new AbortController();
    const healthy = (async (): Promise<void> => {
      while (!watch.signal.aborted) {
        const res = await httpGet(fetchFn, `${baseUrl}${healthPath}`, { signal: watch.signal });
        if (res.status === 200) return;
        await delay(pollMs, watch.signal);
      }
    })();
    let timer: NodeJS.Timeout | undefined;
    let onAbort: () => void = () => undefined;
    type Outcome = { kind: 'ready' } | { kind: 'exit' } | { kind: 'timeout' } | { kind: 'abort' };
    const outcome: Outcome = await Promise.race<Outcome>([
      Promise.all([healthy, readyLine]).then(() => ({ kind: 'ready' }) as const),
      exited.then(() => ({ kind: 'exit' }) as const),
      new Promise<Outcome>((resolve) => {
        timer = setTimeout(() => resolve({ kind: 'timeout' }), config.startTimeoutMs);
      }),
      new Promise<Outcome>((resolve) => {
        onAbort = () => resolve({ kind: 'abort' });
        if (signal?.aborted) onAbort();
        else signal?.addEventListener('abort', onAbort, { once: true });
      }),
    ]);
    watch.abort();
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);

    // A ready verdict that raced with an exit is no verdict.
    if (outcome.kind === 'ready' && exitInfo) return startFailed({ kind: 'exit' });
    if (outcome.kind !== 'ready') return startFailed(outcome);

    async function startFailed(o: Exclude<Outcome, { kind: 'ready' }>): Promise<never> {
      if (o.kind === 'abort') {
        await stop();
        throw abortError(signal as AbortSignal);
      }
      if (o.kind === 'timeout') {
        await stop();
        fail(emit, {
          kind: 'timeout',
          message: `${displayName} was not ready within ${Math.round(config.startTimeoutMs / 1000)} s`,
          fix: 'a big model can take long to load: raise --start-timeout; else read server.log for where it stalled',
          logTail: tail.slice(-30),
        });
      }
      stopping = true;
      const exit = await exited;
      await reap();
      running.delete(server);
      fail(emit, failureFromExit(config.engine, tail, exit, 'start'));
    }

    // ---- ready ----
    // Log lines written before /health answered may sit in the same I/O batch as the answer: let the
    // loop finish that batch so the facts they carry (KV cache, maximum concurrency) are in info.
    await nextLoopTurn();
    await nextLoopTurn();
    if (!info.model) {
      const models = await discoverModels(fetchFn, baseUrl);
      info.model = models[0] ?? config.model ?? '';
    }
    if (!info.engineVersion && config.engine === 'sim') {
      const version = await discoverVersion(fetchFn, baseUrl);
      if (version) info.engineVersion = version;
    }
    // An exit up to here fails the start; from here on (no await in between) it is a death while serving.
    if (exitInfo) return startFailed({ kind: 'exit' });
    serving = true;
    emit({
      type: 'server-state',
      state: 'ready',
      detail: `${displayName} ${info.engineVersion ?? ''} at ${baseUrl} serving ${info.model}`.replace(/\s+/g, ' '),
    });
    return server;
  }

  const start: StartServer = async (config, opts) => {
    const emit: Emit = opts.onEvent ?? (() => undefined);
    if (config.engine === 'attach') return attach(config, opts, emit);
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
