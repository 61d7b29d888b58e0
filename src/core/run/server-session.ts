import { describeEngine } from '../../shared/engines.js';
import { probeEndpoint } from '../load/endpoint-probe.js';
import { cpus } from 'node:os';
import type { ServerConfig } from '../../shared/config.js';
import type { RunEvent } from '../../shared/events.js';
import type { LevelResult, ServerVariant } from '../../shared/run-record.js';
import { UserError } from '../errors.js';
import { createInThreadExecutor } from '../load/executor.js';
import type { RequestExecutor } from '../load/executor.js';
import { maxPlannedConcurrency } from '../load/level-plan.js';
import type { LevelPlan } from '../load/level-plan.js';
import { readContextLimit } from '../load/context-limit.js';
import { contextProblem, fileLengths, longestRequestTokens } from '../load/plan-limits.js';
import type { BodyCompat } from '../load/request-body.js';
import { sharedOpeningText } from '../load/prompts.js';
import { ServerApi, type PromptCounting } from '../load/server-api.js';
import type { AbortReason } from '../load/stream-client.js';
import { createWorkerExecutor } from '../load/worker-executor.js';
import { createBalancedExecutor } from '../load/balanced-executor.js';
import { redactUrl } from '../servers/redact.js';
import type { LoraLoad } from '../load/level-runner.js';
import type { EngineKind } from '../../shared/config.js';
import type { CacheResetResult } from '../../shared/run-record.js';
import { resetPrefixCache } from './cache-reset.js';
import { loraAdapters } from '../../shared/lora.js';
import type { RunningServer, ServerFailure, StartServer } from '../servers/types.js';
import { engineFor } from '../servers/engines/index.js';
import { concurrencyWarning } from '../servers/variants.js';
import type { TelemetryRecorder } from '../telemetry/types.js';
import type { TelemetryFactoryOptions } from './telemetry-options.js';
import { cancelWords } from './cancel-words.js';
import { measureLevel, type LevelMeasureInput } from './level-measure.js';
import type { RunSession } from './run-session.js';
import type { Workload } from '../workloads/workload.js';

/** One server configuration of a run: which it is, the levels it will serve (for sizing) and its collaborators. */
export interface ServerSessionOptions {
  serverConfig: ServerConfig;
  /** Index of the configuration in the server sweep (0 without one). */
  index: number;
  /** The configuration's settings, flattened; only in a server sweep. */
  variant?: ServerVariant;
  /** Every level this configuration may run: sizes the server and checks the context limit. */
  plans: LevelPlan[];
  /** What the prompts are made from (synthetic, a file, shared prefixes, a trace). */
  workload: Workload;
  startServer: StartServer;
  createTelemetry?: (options: TelemetryFactoryOptions) => TelemetryRecorder;
  /** Measures a level another way (a distributed run: with every worker); default measureLevel. */
  measure?: (input: LevelMeasureInput) => Promise<LevelResult | null>;
}

/** A level measured by a server session, and its index in record.levels. */
export interface MeasuredLevel {
  level: LevelResult;
  levelIndex: number;
}

/** What start() learnt of the server: the model, request body compatibility and how prompts are counted. */
/** The server's count of the opening unique prompts share; null when it cannot say (the check then estimates it). */
async function countOpening(counting: PromptCounting, runNonce: number, signal: AbortSignal): Promise<number | null> {
  try {
    return await counting.counter(sharedOpeningText(runNonce), signal);
  } catch {
    return null;
  }
}

interface Ready {
  server: RunningServer;
  executor: RequestExecutor;
  counting: PromptCounting;
  compat: BodyCompat;
  /** The server's context in tokens, when known. */
  contextTokens?: number;
  /** Tokens of the opening every unique prompt shares (template and first words), by the server's count; null unknown. */
  openingTokens: number | null;
  /** The engine that answered (an attached server's, where it said), for its cache-reset endpoint. */
  answeringEngine: EngineKind;
}

/**
 * One server configuration of a run: starts (or attaches to) the server, reads its context limit, probes its API,
 * starts telemetry and the request executor; `runLevel(plan)` measures one level into the run; `close()` stops all.
 */
export class ServerSession {
  /** True once the server refused every request as sent: the run stops with the server's words and the fix. */
  clientStopped = false;
  private readonly levelAbort = new AbortController();
  /** Prompt-file records this server configuration has taken: each configuration starts from the file's first. */
  private nextRecord = 0;
  /** Levels this server configuration has started. */
  private levelsRun = 0;
  private server: RunningServer | null = null;
  private telemetry: TelemetryRecorder | null = null;
  private executor: RequestExecutor | null = null;
  private ready: Ready | null = null;
  private readonly onUserAbort = (): void =>
    this.levelAbort.abort({
      message: this.run.writer.fatal
        ? `stopped: ${this.run.writer.fatal.message}`
        : cancelWords(this.run.signal.reason),
      kind: 'cancelled',
    } satisfies AbortReason);

  constructor(
    private readonly run: RunSession,
    private readonly options: ServerSessionOptions,
  ) {
    run.signal.addEventListener('abort', this.onUserAbort, { once: true });
  }

  /** True once levels must stop: the user cancelled, the server died or refused every request. */
  get stopped(): boolean {
    return this.levelAbort.signal.aborted;
  }

  /** Starts the server and everything that measures it; throws a UserError when the planned levels cannot fit. */
  async start(): Promise<void> {
    const { run, options } = this;
    const { config } = run;
    const { serverConfig, plans } = options;
    const emit = (event: RunEvent): void => run.emit(event);
    run.enterServerConfig(options.index);
    const maxConc = maxPlannedConcurrency(plans);
    // A conversation's last turn sends the whole history: that prompt is the largest the server must take.
    const largestInput = Math.max(...plans.map((p) => longestRequestTokens(p) - p.outputLen));
    const largestOutput = Math.max(...plans.map((p) => p.outputLen));
    const server = await options.startServer(serverConfig, {
      runDir: run.dir,
      onEvent: emit,
      signal: run.signal,
      maxConcurrency: maxConc,
      largestRequest: { inputTokens: largestInput, outputTokens: largestOutput },
      apiKey: config.apiKey,
    });
    this.server = server;
    const info = server.info;
    run.serversStarted++;
    void server.died.then((f) => this.serverDied(f));
    run.record.environment.engine = {
      kind: info.engine,
      version: info.engineVersion,
      model: info.model,
      url: describeEngine(serverConfig.engine).launches ? undefined : info.baseUrl,
      ...(info.replicaUrls && info.replicaUrls.length > 1 ? { replicas: info.replicaUrls.map(redactUrl) } : {}),
      simulated: info.simulated,
      command: info.command,
    };
    run.record.simulated = info.simulated;
    // Requests longer than the server's context would all fail (after a long calibration): refuse them now.
    const read = await readContextLimit({
      baseUrl: info.baseUrl,
      model: info.model,
      apiKey: config.apiKey,
      signal: this.levelAbort.signal,
    });
    // In the words of the engine that answered, else of the one servebench launched.
    const limit = read && { ...read, engine: read.engine ?? serverConfig.engine };
    // An attached llama.cpp tells its slots only in /props (a launched one's log said them already).
    const slotted =
      limit?.slots !== undefined && info.maxRunningRequests === undefined
        ? { ...info, maxRunningRequests: limit.slots }
        : info;
    // A conversation's last turn carries its whole history: size by the longest request of any level.
    const longest = Math.max(...plans.map(longestRequestTokens));
    const words = limit?.engine ? engineFor(limit.engine).runningLimit : undefined;
    const tooMany = concurrencyWarning(slotted, maxConc, longest, serverConfig.maxSeqs, words);
    if (tooMany) emit({ type: 'message', severity: 'warn', text: tooMany });
    // A prompt file's own lengths are held to the context record by record, as its prompts are built.
    const workload = options.workload;
    const tooLong = contextProblem(plans, limit, workload.kind === 'file' && fileLengths(workload));
    if (tooLong) throw new UserError(tooLong);
    const api = new ServerApi({ baseUrl: info.baseUrl, apiKey: config.apiKey, timeoutMs: config.timeoutMs });
    // A cancel stops these calls at once, not after --timeout.
    const { compat, counting } = await probeEndpoint(
      api,
      info.baseUrl,
      config.api,
      info.model,
      this.levelAbort.signal,
      emit,
    );
    const { viaTokenize, completionsExact, tokenizeAnswer } = counting;
    if (!viaTokenize) {
      emit({
        type: 'message',
        severity: 'info',
        text: completionsExact
          ? "server's /tokenize takes no chat messages: prompt length calibrated from usage.prompt_tokens and verified per request (--api completions counts exactly)"
          : `${tokenizeAnswer ?? 'server has no /tokenize'}: prompt length calibrated from usage.prompt_tokens and verified per request`,
      });
    }
    const openingTokens = viaTokenize ? await countOpening(counting, run.runNonce, this.levelAbort.signal) : null;
    await this.startTelemetry();
    const executor = this.createExecutor(info, maxConc);
    this.ready = {
      server,
      executor,
      counting,
      compat,
      contextTokens: limit?.tokens,
      openingTokens,
      answeringEngine: limit?.engine ?? serverConfig.engine,
    };
  }

  /** The executor that sends every level's requests (balanced over replicas), stopped at once by a level abort. */
  private createExecutor(info: RunningServer['info'], maxConc: number): RequestExecutor {
    const { config, clock } = this.run;
    // Worker threads pay off only with cores to spare: on a small machine they add GC pauses and hops.
    const workers =
      config.clientWorkers ?? (maxConc >= 128 && cpus().length >= 8 ? Math.min(4, Math.floor(cpus().length / 4)) : 0);
    const executorFor = (baseUrl: string): RequestExecutor =>
      workers > 0
        ? createWorkerExecutor({ baseUrl, apiKey: config.apiKey, clock, workers })
        : createInThreadExecutor({ baseUrl, apiKey: config.apiKey, clock });
    const replicas = info.replicaUrls ?? [];
    const executor = this.watchRefusals(
      replicas.length > 1
        ? createBalancedExecutor(replicas.map(executorFor), config.balance)
        : executorFor(info.baseUrl),
    );
    this.executor = executor;
    this.levelAbort.signal.addEventListener(
      'abort',
      () => executor.abortAll(this.levelAbort.signal.reason as AbortReason),
      { once: true },
    );
    return executor;
  }

  /** The server died (its process exited, or an attached one went away): the level in progress ends cut short by it. */
  private serverDied(f: ServerFailure): void {
    this.run.serverFailure ??= f;
    if (this.levelAbort.signal.aborted) return;
    this.levelAbort.abort({ message: `the server died: ${f.message}`, kind: 'server-died' } satisfies AbortReason);
  }

  /**
   * An attached server's death shows only as refused requests: the first one ends the level at once (before its lane
   * sends again), as a launched engine's exit does, so no round goes on against a server that is gone.
   */
  private watchRefusals(executor: RequestExecutor): RequestExecutor {
    const watch = this.server?.watch;
    if (!watch) return executor;
    return {
      threads: executor.threads,
      execute: async (spec) => {
        const outcome = await executor.execute(spec);
        if (outcome.result.errorKind === 'connection-refused') {
          watch.requestRefused();
          const failure = this.server?.hasDied();
          if (failure) this.serverDied(failure);
        }
        return outcome;
      },
      abortAll: (reason) => executor.abortAll(reason),
      startLagWindow: () => executor.startLagWindow(),
      endLagWindow: () => executor.endLagWindow(),
      close: () => executor.close(),
    };
  }

  private async startTelemetry(): Promise<void> {
    const { run, options } = this;
    const info = this.server!.info;
    if (!options.createTelemetry) return;
    const vi = options.index;
    const line = (kind: string, sample: object): void => {
      run.telemetryLines.push(JSON.stringify({ kind, serverConfigIndex: vi, ...sample }));
    };
    const telemetry = options.createTelemetry({
      clock: run.clock,
      metricsUrl: info.metricsUrl,
      engine: info.engine,
      nvidiaSmiPath: run.config.nvidiaSmi,
      dcgmUrl: run.config.dcgmUrl,
      intervalMs: run.config.telemetryIntervalMs,
      gpuStateFile: info.gpuStateFile,
      ownPids: () => (info.pid !== undefined ? [info.pid] : []),
      onGpuSample: (sample) => {
        line('gpu', sample);
        run.emit({ type: 'gpu-sample', sample });
      },
      onEngineSample: (sample) => {
        line('engine', sample);
        run.emit({ type: 'engine-sample', sample });
      },
      onClientSample: (sample) => line('client', sample),
      signal: this.levelAbort.signal,
      onIssue: (issue) => run.emit({ type: 'message', severity: 'warn', text: issue.detail }),
    });
    this.telemetry = telemetry;
    await telemetry.start();
    if (!telemetry.gpuStatus.available) {
      run.emit({
        type: 'message',
        severity: 'warn',
        text: `GPU telemetry unavailable: ${telemetry.gpuStatus.reason ?? 'no source'}`,
      });
    }
    for (const text of telemetry.warnings?.() ?? []) run.emit({ type: 'message', severity: 'warn', text });
    const gpus = telemetry.gpuInfo?.();
    if (gpus && gpus.length > 0) run.record.environment.gpus = gpus.map(({ rejected: _named, ...g }) => g);
  }

  /** Measures one level into the run; null when nothing was measured (stopped, cancelled, server died). */
  async runLevel(plan: LevelPlan): Promise<MeasuredLevel | null> {
    const { run, ready } = this;
    if (!ready) throw new Error('runLevel before start');
    if (this.stopped) return null;
    const watch = ready.server.watch;
    if (watch) {
      // An attached server that went away between levels is dead, or back (and that is said) before this level.
      const note = await watch.levelStarting(this.levelAbort.signal);
      const failure = ready.server.hasDied();
      if (failure) this.serverDied(failure);
      if (this.stopped) return null;
      if (note) run.emit({ type: 'message', severity: 'warn', text: note });
    }
    const cacheReset = run.config.cacheReset ? await this.resetCache(ready) : undefined;
    if (cacheReset && cacheReset.status !== 'done' && this.levelsRun === 0)
      run.emit({
        type: 'message',
        severity: 'warn',
        text: `cache reset before each level: ${cacheReset.status}: ${cacheReset.detail}`,
      });
    const slot = run.takeSlot(plan);
    const firstRecord = this.nextRecord;
    // Each configuration (a server sweep restarts the server with new settings) may refuse every request anew.
    const firstOfServer = this.levelsRun++ === 0;
    this.nextRecord += plan.warmup + plan.rounds * plan.requestsPerRound;
    const level = await (this.options.measure ?? measureLevel)({
      plan,
      levelIndex: slot.levelIndex,
      serverConfigIndex: this.options.index,
      serverVariant: this.options.variant,
      config: run.config,
      clock: run.clock,
      executor: ready.executor,
      counting: ready.counting,
      workload: this.options.workload,
      contextTokens: ready.contextTokens,
      openingTokens: ready.openingTokens,
      compat: ready.compat,
      model: ready.server.info.model,
      ...this.loraLoad(),
      runNonce: run.runNonce,
      tagPrefix: run.tagPrefix,
      firstId: slot.firstId,
      firstPromptIndex: slot.firstPromptIndex,
      firstRecord,
      firstOfServer,
      signal: this.levelAbort.signal,
      emit: (event) => run.emit(event),
      writer: run.writer,
      telemetry: this.telemetry,
      simulated: ready.server.info.simulated,
      readProc: run.readProc,
      // The server refuses every request as sent: stop now, keep the folder, exit 2 with its words and the fix.
      stopRun: (reason: string, exitCode = 2) => {
        run.fail(reason, exitCode);
        this.clientStopped = true;
        this.levelAbort.abort({ message: reason, kind: 'cancelled' } satisfies AbortReason);
      },
    });
    watch?.levelEnded();
    if (level && cacheReset) level.cacheReset = cacheReset;
    const levelIndex = await run.addLevel(slot, level);
    return level && levelIndex !== null ? { level, levelIndex } : null;
  }

  /** Empties the prefix cache of the server (every replica) before a level, where its engine allows. */
  private async resetCache(ready: Ready): Promise<CacheResetResult> {
    const engine = engineFor(ready.answeringEngine);
    const info = ready.server.info;
    return resetPrefixCache({
      spec: engine.cacheReset,
      engineName:
        ready.answeringEngine === 'attach'
          ? 'the attached server (an engine not named in its /v1/models)'
          : engine.description.name,
      baseUrls: info.replicaUrls ?? [info.baseUrl],
      apiKey: this.run.config.apiKey,
      signal: this.levelAbort.signal,
    });
  }

  /** --lora: the adapters, the pick and how this engine names an adapter in a request; none without --lora. */
  private loraLoad(): { lora?: LoraLoad } {
    const adapters = loraAdapters(this.options.serverConfig.lora);
    if (adapters.length === 0) return {};
    const by = engineFor(this.options.serverConfig.engine).loraBy ?? 'model';
    return { lora: { adapters, pick: this.run.config.loraPick, by } };
  }

  /** The started server's facts (its URL and model); null before start. */
  get serverInfo(): RunningServer['info'] | null {
    return this.server?.info ?? null;
  }

  /** The server's failure if it has exited (known synchronously: a death just before the last level ended counts). */
  hasDied(): ReturnType<RunningServer['hasDied']> {
    return this.server?.hasDied() ?? null;
  }

  /** Stops the executor, telemetry and server, and writes the telemetry still pending; never throws for them. */
  async close(): Promise<void> {
    this.run.signal.removeEventListener('abort', this.onUserAbort);
    await this.executor?.close().catch(() => undefined);
    await this.telemetry?.stop().catch(() => undefined);
    await this.run.flushTelemetry();
    await this.server?.stop().catch(() => undefined);
  }
}
