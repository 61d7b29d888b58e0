import { randomBytes } from 'node:crypto';
import { cpus, hostname, platform, release, totalmem } from 'node:os';
import type { BenchConfig, ServerConfig } from '../shared/config.js';
import type { RunEvent } from '../shared/events.js';
import type { RequestRecord } from '../shared/request-record.js';
import type { Check, LevelResult, RunEnvironment, RunRecord, ServerVariant } from '../shared/run-record.js';
import type { Clock } from './clock.js';
import { createMonoClock } from './clock.js';
import { UserError } from './errors.js';
import { createInThreadExecutor } from './load/executor.js';
import type { RequestExecutor } from './load/executor.js';
import { maxPlannedConcurrency, planLevels } from './load/level-plan.js';
import type { LevelPlan } from './load/level-plan.js';
import { runLevel } from './load/level-runner.js';
import { readContextLimit } from './load/context-limit.js';
import { contextProblem, longestRequestTokens } from './load/plan-limits.js';
import type { TokenCounter } from './load/prompts.js';
import type { MessagesCounter } from './load/conversations.js';
import type { BodyCompat } from './load/request-body.js';
import { ServerApi } from './load/server-api.js';
import { createWorkerExecutor } from './load/worker-executor.js';
import { combineChecks, summarizeLevel } from './metrics/index.js';
import { clientErrorFix, commonestError } from './metrics/error-summary.js';
import { renderSummaryCsv } from './report/registry.js';
import { RUN_FILES, RunWriter, createRunDir } from './runs/run-store.js';
import { diskErrorOf, type RunFs } from './runs/run-fs.js';
import type { RunningServer, ServerFailure, StartServer } from './servers/types.js';
import type { AbortReason } from './load/stream-client.js';
import { benchSecretValues, redactBenchConfig, redactUrl } from './servers/redact.js';
import { applyVariant, concurrencyWarning } from './servers/variants.js';
import { levelEnergyFromRecorder } from './telemetry/level-energy.js';
import type { TelemetryChecks, TelemetryRecorder } from './telemetry/types.js';
import type { ClientSample, EngineSample, GpuSample } from '../shared/telemetry.js';
import { SERVEBENCH_VERSION } from './version.js';
import { capacityPlan, goodputSlo } from './capacity/plan.js';
import { buildLevelPrompts } from './workloads/level-prompts.js';
import { loadWorkload, sharesPrefixes, type Workload } from './workloads/workload.js';
import { maxCapacityProbes, searchCapacity } from './capacity/search.js';

/** Options for creating the telemetry recorder of one server configuration. */
export interface TelemetryFactoryOptions {
  clock: Clock;
  metricsUrl?: string;
  engine: ServerConfig['engine'];
  nvidiaSmiPath?: string;
  dcgmUrl?: string;
  intervalMs: number;
  /** Fake GPU state written by the simulator (demo mode); the fake nvidia-smi reads it. */
  gpuStateFile?: string;
  /** The engine's own processes: not counted as "other processes on the GPU". */
  ownPids?: () => Iterable<number>;
  onGpuSample?: (sample: GpuSample) => void;
  onEngineSample?: (sample: EngineSample) => void;
  onClientSample?: (sample: ClientSample) => void;
}

/** Collaborators of a benchmark run, passed in so tests can use fakes. */
export interface BenchmarkDeps {
  startServer: StartServer;
  createTelemetry?: (options: TelemetryFactoryOptions) => TelemetryRecorder;
  telemetryChecks?: TelemetryChecks;
  /** Host facts for the record (systeminformation in the CLI); os basics otherwise. */
  hostInfo?: () => Promise<Partial<RunEnvironment['host']>>;
  /** The environment engines inherit, for its token-like secret values (default process.env). */
  env?: NodeJS.ProcessEnv;
  onEvent?: (event: RunEvent) => void;
  signal?: AbortSignal;
  clock?: Clock;
  now?: () => Date;
  /** File operations of the run folder (tests inject a disk that fills up). */
  runFs?: RunFs;
  /** The run this one re-runs (`servebench run --from`), recorded as the record's fromRun. */
  fromRun?: RunRecord['fromRun'];
}

/** The outcome of runBenchmark: the record as written and its folder. */
export interface BenchmarkResult {
  record: RunRecord;
  dir: string;
  /** Set when the run failed: why, in one line. */
  failure?: string;
  /** Exit code the failure deserves: 2 when the user can fix it (server unreachable, bad setting), else 1. */
  exitCode?: number;
}

function basicHost(): RunEnvironment['host'] {
  const cpuList = cpus();
  return {
    hostname: hostname(),
    os: `${platform()} ${release()}`,
    cpu: cpuList[0]?.model,
    cpus: cpuList.length,
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
  };
}

/** How a level is named in run-level check details: its load and, in a server sweep, its configuration. */
function levelLabel(level: LevelResult): string {
  const load = level.rate !== undefined ? `${level.rate} req/s` : `c=${level.concurrency}`;
  const variant = level.serverVariant
    ? ` ${Object.entries(level.serverVariant)
        .map(([k, v]) => `${k.split('.').pop()}=${String(v)}`)
        .join(',')}`
    : '';
  return `${load} ${level.inputLen}/${level.outputLen}${variant}`;
}

function flattenVariant(variant: Record<string, unknown>): ServerVariant {
  const out: ServerVariant = {};
  for (const [key, value] of Object.entries(variant)) {
    if (value && typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) out[`${key}.${k}`] = v as string | number | boolean;
    } else if (value !== undefined) {
      out[key] = value as string | number | boolean;
    }
  }
  return out;
}

function serverCheck(failure: ServerFailure | null, simulated: boolean, started: boolean, why?: string): Check | null {
  if (failure) return { id: 'server', status: 'fail', detail: `${failure.message} — ${failure.fix}` };
  if (!started) return why ? { id: 'server', status: 'fail', detail: `the server never became ready: ${why}` } : null;
  return {
    id: 'server',
    status: simulated ? 'warn' : 'pass',
    detail: simulated
      ? 'SIMULATED engine: these numbers come from the built-in simulator, not a GPU'
      : 'server stayed up for the whole run',
  };
}

/**
 * When every request of the first level's first batch (its warm-up, or its first round when warm-up is off) got the
 * same client error (4xx, not 408/429, which pass with time), no measurement can succeed: the reason to stop, quoting
 * the server and naming the fix. Null otherwise.
 */
export function firstBatchClientError(batch: readonly RequestRecord[], plan: LevelPlan): string | null {
  if (batch.length === 0 || batch.some((r) => r.ok || r.round !== batch[0]!.round)) return null;
  const status = batch[0]!.httpStatus;
  if (status === undefined || status < 400 || status > 499 || status === 408 || status === 429) return null;
  if (batch.some((r) => r.httpStatus !== status)) return null;
  const top = commonestError(batch);
  const message = top?.message ?? `HTTP ${status}`;
  const fix = clientErrorFix(status, message, plan.inputLen, plan.outputLen);
  const which = batch[0]!.warmup ? 'warm-up requests' : 'requests of the first round';
  return `the server rejected all ${batch.length} ${which}: "${message}" — ${fix}`;
}

const activeRuns = new Set<{ record: RunRecord; writer: RunWriter }>();

/**
 * For a process that must exit now (a second Ctrl-C): marks every run in progress cancelled and writes its
 * run.json synchronously, so the folder never says "running" for a run that is gone.
 */
export function saveActiveRunsSync(reason: string): void {
  for (const { record, writer } of activeRuns) {
    record.status = 'cancelled';
    record.error = reason;
    record.finishedAt = new Date().toISOString();
    try {
      writer.writeRecordSync(record);
    } catch {
      // Nothing more can be done on the way out.
    }
  }
}

/**
 * Runs a whole benchmark: for each server configuration, launch (or attach), calibrate prompts, run every
 * level with warm-up and rounds, sample telemetry, compute metrics and checks, and keep the run folder
 * up to date after every round so nothing measured is lost to a crash or a cancel.
 */
export async function runBenchmark(config: BenchConfig, deps: BenchmarkDeps): Promise<BenchmarkResult> {
  const emit = (event: RunEvent): void => deps.onEvent?.(event);
  const now = deps.now ?? (() => new Date());
  const clock = deps.clock ?? createMonoClock();
  // Everything a user can get wrong is checked before a run folder exists.
  const capacity = config.findCapacity ? capacityPlan(config) : null;
  // A prompt file or trace is read (and its settings checked) now; a trace is one level of its own.
  const workload = await loadWorkload(config);
  // A capacity search sizes the server (and checks limits) for its bound; its levels are chosen as it goes.
  const plans = capacity
    ? [capacity.planAt(capacity.max)]
    : workload.kind === 'trace'
      ? [workload.plan]
      : planLevels(config);
  const variants = config.serverVariants && config.serverVariants.length > 0 ? config.serverVariants : [{}];
  const serverConfigs = variants.map((variant) => {
    const server = Object.keys(variant).length === 0 ? config.server : applyVariant(config.server, variant);
    return !server.model && config.model ? { ...server, model: config.model } : server;
  });
  const startedAt = now();
  const dir = await createRunDir(config.out, config.label, startedAt, deps.runFs);
  // Every file of the run is scrubbed of this run's secrets: a server may echo a key in an error message.
  const writer = new RunWriter(dir, { fs: deps.runFs, secrets: benchSecretValues(config, deps.env ?? process.env) });
  const runId = dir.split('/').pop() as string;
  const simulated = config.server.engine === 'sim' && !config.server.url;
  const hostExtra = deps.hostInfo ? await deps.hostInfo().catch(() => ({})) : {};
  const record: RunRecord = {
    schemaVersion: 1,
    id: runId,
    label: config.label,
    startedAt: startedAt.toISOString(),
    finishedAt: null,
    status: 'running',
    simulated,
    ...(deps.fromRun ? { fromRun: deps.fromRun } : {}),
    // Secrets (API key, HF_TOKEN and the like in env or arguments) never reach the record.
    config: redactBenchConfig(config),
    environment: {
      host: { ...basicHost(), ...hostExtra },
      servebenchVersion: SERVEBENCH_VERSION,
      engine: {
        kind: config.server.engine,
        model: config.model ?? config.server.model,
        url: config.server.url === undefined ? undefined : redactUrl(config.server.url),
        simulated,
      },
    },
    clock: {
      originMonoNs: clock.originMonoNs.toString(),
      originWall: new Date(startedAt.getTime() - clock.nowMs()).toISOString(),
    },
    levels: [],
    checks: [],
  };
  await writer.writeRecord(record);
  const active = { record, writer };
  activeRuns.add(active);
  emit({
    type: 'run-started',
    runId,
    dir,
    simulated,
    totalLevels: capacity ? maxCapacityProbes(capacity.start, capacity.max) : plans.length * variants.length,
  });

  // A write that fails (disk full, read-only) stops the run like a cancel; the failure below says why.
  const userSignal = deps.signal ? AbortSignal.any([deps.signal, writer.fatalSignal]) : writer.fatalSignal;
  const runNonce = randomBytes(4).readUInt32BE(0) % 1_000_000;
  const tagPrefix = `sb-${runNonce.toString(36)}`;
  let failure: string | undefined;
  let failureExitCode: number | undefined;
  let clientStop = false;
  let serverFailure: ServerFailure | null = null;
  let serversStarted = 0;
  let nextRequestId = 0;
  let nextPromptIndex = 0;
  let levelIndex = 0;
  const telemetryLines: string[] = [];

  outer: for (let vi = 0; vi < variants.length; vi++) {
    if (userSignal.aborted) break;
    const variant = variants[vi] as Record<string, unknown>;
    const serverConfig = serverConfigs[vi] as ServerConfig;
    const flatVariant = variants.length > 1 ? flattenVariant(variant) : undefined;
    let server: RunningServer | null = null;
    let telemetry: TelemetryRecorder | null = null;
    let executor: RequestExecutor | null = null;
    const levelAbort = new AbortController();
    const onUserAbort = (): void =>
      levelAbort.abort({
        message: writer.fatal ? `stopped: ${writer.fatal.message}` : 'cancelled by the user',
        kind: 'cancelled',
      } satisfies AbortReason);
    userSignal.addEventListener('abort', onUserAbort, { once: true });
    try {
      server = await deps.startServer(serverConfig, {
        runDir: dir,
        onEvent: emit,
        signal: userSignal,
        maxConcurrency: maxPlannedConcurrency(plans),
        largestRequest: { inputTokens: Math.max(...config.inputLen), outputTokens: Math.max(...config.outputLen) },
        apiKey: config.apiKey,
      });
      const info = server.info;
      serversStarted++;
      void server.died.then((f) => {
        serverFailure = f;
        levelAbort.abort({ message: `the server died: ${f.message}`, kind: 'server-died' } satisfies AbortReason);
      });
      record.environment.engine = {
        kind: info.engine,
        version: info.engineVersion,
        model: info.model,
        url: serverConfig.engine === 'attach' ? info.baseUrl : undefined,
        simulated: info.simulated,
        command: info.command,
      };
      record.simulated = info.simulated;
      const maxConc = maxPlannedConcurrency(plans);
      const maxTokensPerRequest = Math.max(...plans.map(longestRequestTokens));
      const tooMany = concurrencyWarning(info, maxConc, maxTokensPerRequest, serverConfig.maxSeqs);
      if (tooMany) emit({ type: 'message', severity: 'warn', text: tooMany });
      // Requests longer than the server's context would all fail (after a long calibration): refuse them now.
      const limit = await readContextLimit({
        baseUrl: info.baseUrl,
        model: info.model,
        apiKey: config.apiKey,
        signal: levelAbort.signal,
      });
      const tooLong = contextProblem(plans, limit);
      if (tooLong) throw new UserError(tooLong);
      const api = new ServerApi({ baseUrl: info.baseUrl, apiKey: config.apiKey, timeoutMs: config.timeoutMs });
      const { compat, note } = await api.probeCompat(config.api, info.model);
      if (note) emit({ type: 'message', severity: 'warn', text: note });
      const { counter, viaTokenize, countMessages } = await api.tokenCounter(config.api, info.model, compat);
      if (!viaTokenize) {
        emit({
          type: 'message',
          severity: 'info',
          text: 'server has no /tokenize: prompt length calibrated from usage.prompt_tokens and verified per request',
        });
      }
      if (deps.createTelemetry) {
        telemetry = deps.createTelemetry({
          clock,
          metricsUrl: info.metricsUrl,
          engine: info.engine,
          nvidiaSmiPath: config.nvidiaSmi,
          dcgmUrl: config.dcgmUrl,
          intervalMs: config.telemetryIntervalMs,
          gpuStateFile: info.gpuStateFile,
          ownPids: () => (info.pid !== undefined ? [info.pid] : []),
          onGpuSample: (sample) => {
            telemetryLines.push(JSON.stringify({ kind: 'gpu', serverConfigIndex: vi, ...sample }));
            emit({ type: 'gpu-sample', sample });
          },
          onEngineSample: (sample) => {
            telemetryLines.push(JSON.stringify({ kind: 'engine', serverConfigIndex: vi, ...sample }));
            emit({ type: 'engine-sample', sample });
          },
          onClientSample: (sample) => {
            telemetryLines.push(JSON.stringify({ kind: 'client', serverConfigIndex: vi, ...sample }));
          },
        });
        await telemetry.start();
        if (!telemetry.gpuStatus.available) {
          emit({
            type: 'message',
            severity: 'warn',
            text: `GPU telemetry unavailable: ${telemetry.gpuStatus.reason ?? 'no source'}`,
          });
        }
        for (const text of telemetry.warnings?.() ?? []) emit({ type: 'message', severity: 'warn', text });
        const gpus = telemetry.gpuInfo?.();
        if (gpus && gpus.length > 0) record.environment.gpus = gpus.map((g) => ({ ...g }));
      }
      // Worker threads pay off only with cores to spare: on a small machine they add GC pauses and hops.
      const workers =
        config.clientWorkers ?? (maxConc >= 128 && cpus().length >= 8 ? Math.min(4, Math.floor(cpus().length / 4)) : 0);
      executor =
        workers > 0
          ? createWorkerExecutor({ baseUrl: info.baseUrl, apiKey: config.apiKey, clock, workers })
          : createInThreadExecutor({ baseUrl: info.baseUrl, apiKey: config.apiKey, clock });
      const exec = executor;
      levelAbort.signal.addEventListener('abort', () => exec.abortAll(levelAbort.signal.reason as AbortReason), {
        once: true,
      });

      const measure = async (plan: LevelPlan): Promise<{ level: LevelResult; levelIndex: number } | null> => {
        if (levelAbort.signal.aborted) return null;
        const level = await runOneLevel({
          plan,
          levelIndex,
          serverConfigIndex: vi,
          serverVariant: flatVariant,
          config,
          clock,
          executor: exec,
          counter,
          countMessages,
          viaTokenize,
          workload,
          contextTokens: limit?.tokens,
          compat,
          model: info.model,
          runNonce,
          tagPrefix,
          firstId: nextRequestId,
          firstPromptIndex: nextPromptIndex,
          signal: levelAbort.signal,
          emit,
          writer,
          telemetry,
          telemetryChecks: deps.telemetryChecks,
          simulated: info.simulated,
          // The server refuses every request as sent: stop now, keep the folder, exit 2 with its words and the fix.
          stopRun: (reason: string) => {
            failure = reason;
            failureExitCode = 2;
            clientStop = true;
            levelAbort.abort({ message: reason, kind: 'cancelled' } satisfies AbortReason);
          },
        });
        nextRequestId += plan.warmup + plan.rounds * plan.requestsPerRound;
        nextPromptIndex += plan.warmup + plan.rounds * plan.requestsPerRound;
        const index = levelIndex++;
        if (level) {
          record.levels.push(level);
          emit({ type: 'level-finished', levelIndex: index, level });
        }
        await writer.appendLines(RUN_FILES.telemetry, telemetryLines.splice(0));
        await writer.writeRecord(record);
        return level ? { level, levelIndex: record.levels.length - 1 } : null;
      };
      if (capacity) {
        const { mode, targets, start, max, planAt } = capacity;
        const stopped = (): boolean => levelAbort.signal.aborted;
        record.capacity = await searchCapacity({
          mode,
          targets,
          start,
          max,
          stopped,
          measure: (l) => measure(planAt(l)),
        });
        await writer.writeRecord(record);
      } else {
        for (const plan of plans) await measure(plan);
      }
      if (clientStop) break outer;
      // The exit is known synchronously: a death just before the last level ended still fails the run.
      serverFailure ??= server.hasDied();
      if (serverFailure) break outer;
    } catch (error) {
      serverFailure ??= server?.hasDied() ?? null;
      if (!serverFailure && !userSignal.aborted) {
        // A file the server needs in the run folder could not be written (disk full): a DiskError, exit 2.
        const cause = diskErrorOf(error) ?? error;
        failure = cause instanceof Error ? cause.message : String(cause);
        if (cause instanceof UserError) failureExitCode = cause.exitCode;
        else failure = `internal error: ${failure}`;
      }
      // A cancel during start-up or cool-down rejects with an AbortError: that is a cancelled run, not a failure.
      break outer;
    } finally {
      userSignal.removeEventListener('abort', onUserAbort);
      await executor?.close().catch(() => undefined);
      await telemetry?.stop().catch(() => undefined);
      await writer.appendLines(RUN_FILES.telemetry, telemetryLines.splice(0));
      await server?.stop().catch(() => undefined);
    }
  }

  // Read after stop(): the failure then carries the server's last log lines.
  if (serverFailure) {
    const f = serverFailure as ServerFailure;
    failure = `server died during the run: ${f.message} — ${f.fix}`;
  }
  if (writer.fatal) [failure, failureExitCode] = [writer.fatal.message, 2];
  record.status = failure ? 'failed' : userSignal.aborted ? 'cancelled' : 'completed';
  if (failure) record.error = failure;
  else if (userSignal.aborted) record.error = 'cancelled by the user; levels measured so far are kept';
  record.finishedAt = now().toISOString();
  record.checks = combineChecks(
    record.levels.map((l) => l.checks),
    record.levels.map((l) => levelLabel(l)),
  );
  const server = serverCheck(serverFailure, record.simulated, serversStarted > 0, failure);
  if (server) record.checks.push(server);
  await writer.writeRecord(record);
  await writer.writeText(RUN_FILES.summary, await renderSummaryCsv(record));
  await writer.flush();
  activeRuns.delete(active);
  if (writer.fatal) [failure, failureExitCode] = [writer.failureLine(), 2];
  emit({ type: 'run-finished', runId, dir, status: record.status, record });
  return { record, dir, failure, exitCode: failure ? (failureExitCode ?? 1) : undefined };
}

interface OneLevelInput {
  plan: LevelPlan;
  levelIndex: number;
  serverConfigIndex: number;
  serverVariant?: ServerVariant;
  config: BenchConfig;
  clock: Clock;
  executor: RequestExecutor;
  counter: TokenCounter;
  /** Counts chat messages: multi-turn histories, system prompts, message lists (absent: the server cannot). */
  countMessages?: MessagesCounter;
  viaTokenize: boolean;
  workload: Workload;
  contextTokens?: number;
  compat: BodyCompat;
  model: string;
  runNonce: number;
  tagPrefix: string;
  firstId: number;
  firstPromptIndex: number;
  signal: AbortSignal;
  emit: (event: RunEvent) => void;
  writer: RunWriter;
  telemetry: TelemetryRecorder | null;
  telemetryChecks?: TelemetryChecks;
  simulated: boolean;
  /** Ends the run as failed with this reason (the level's warm-up showed no request can succeed). */
  stopRun: (reason: string) => void;
}

async function runOneLevel(input: OneLevelInput): Promise<LevelResult | null> {
  const { plan, levelIndex, config, emit, signal } = input;
  emit({
    type: 'level-started',
    levelIndex,
    concurrency: plan.concurrency,
    rate: plan.rate,
    inputLen: plan.inputLen,
    outputLen: plan.outputLen,
    warmupRequests: plan.warmup,
    measuredRequests: plan.rounds * plan.requestsPerRound,
    serverConfigIndex: input.serverConfigIndex,
  });
  emit({ type: 'phase', levelIndex, phase: 'prompts' });
  const prompts = await buildLevelPrompts({
    workload: input.workload,
    plan,
    count: plan.warmup + plan.rounds * plan.requestsPerRound,
    runNonce: input.runNonce,
    firstIndex: input.firstPromptIndex,
    uniquePrefix: config.uniquePrefix,
    counter: input.counter,
    viaTokenize: input.viaTokenize,
    countMessages: input.countMessages ?? null,
    api: config.api,
    contextTokens: input.contextTokens,
  });
  if (signal.aborted) return null;
  if (config.coolDownToC !== undefined && input.telemetry?.waitCool) {
    if (input.telemetry.gpuStatus.available) {
      emit({ type: 'phase', levelIndex, phase: 'cooldown' });
      // A GPU that never cools (or stops reporting) must not hang the run: after 10 minutes go on, and say so.
      try {
        await input.telemetry.waitCool(config.coolDownToC, AbortSignal.any([signal, AbortSignal.timeout(600_000)]));
      } catch (error) {
        if (signal.aborted) throw error;
        emit({
          type: 'message',
          severity: 'warn',
          text: `the GPU did not cool to ${config.coolDownToC} °C within 10 minutes; level ${levelIndex + 1} starts warm`,
        });
      }
    } else {
      emit({ type: 'message', severity: 'warn', text: 'cannot wait for the GPU to cool down: no GPU telemetry' });
    }
  }
  const startMs = input.clock.nowMs();
  input.executor.startLagWindow();
  const run = await runLevel({
    plan,
    levelIndex,
    prompts,
    executor: input.executor,
    clock: input.clock,
    model: input.model,
    api: config.api,
    compat: input.compat,
    ignoreEos: config.ignoreEos,
    temperature: config.temperature,
    timeoutMs: config.timeoutMs,
    seed: config.seed,
    firstId: input.firstId,
    tagPrefix: input.tagPrefix,
    countMessages: input.countMessages,
    signal,
    onEvent: emit,
    onRecords: (records: RequestRecord[]) => {
      void input.writer.appendRequests(records);
      // Called before the next round starts, so an abort here sends no further request.
      const first = records[0]?.warmup === true || (plan.warmup === 0 && records[0]?.round === 0);
      const stop = levelIndex === 0 && first ? firstBatchClientError(records, plan) : null;
      if (stop) input.stopRun(stop);
    },
  });
  const loopLagP99Ms = await input.executor.endLagWindow();
  const endMs = input.clock.nowMs();
  if (run.measured.length === 0) return null;
  const measuredOk = run.measured.filter((r) => r.ok);
  const outputTokens = measuredOk.reduce((s, r) => s + r.nOut, 0);
  const telemetry =
    input.telemetry && run.measureStartMs !== null && run.measureEndMs !== null
      ? input.telemetry.summarizeWindow(run.measureStartMs, run.measureEndMs, outputTokens)
      : undefined;
  const extraChecks = input.telemetryChecks ? input.telemetryChecks(telemetry) : [];
  const abortReason = signal.reason as Partial<AbortReason> | undefined;
  const cutShort = run.aborted
    ? {
        reason: abortReason?.message ?? 'cancelled',
        byServer: abortReason?.kind === 'server-died',
      }
    : undefined;
  const level = summarizeLevel({
    records: [...run.warmup, ...run.measured],
    concurrency: plan.concurrency,
    rate: plan.rate,
    inputLen: plan.inputLen,
    outputLen: plan.outputLen,
    rounds: run.roundsCompleted,
    warmupRequests: run.warmup.length,
    serverConfigIndex: input.serverConfigIndex,
    serverVariant: input.serverVariant,
    gpuPricePerHour: config.gpuPricePerHour,
    utilization: config.utilization,
    slo: goodputSlo(config),
    uniquePrefix: config.uniquePrefix,
    sharedPrefixes: sharesPrefixes(input.workload),
    prefixCacheHitsDelta: telemetry?.prefixCacheHits ?? null,
    loopLagP99Ms,
    extraChecks,
    cutShort,
  });
  const explanation =
    level.roundCv !== null
      ? input.telemetry?.explainSpread?.(
          level.rounds.filter((r) => !r.partial),
          level.roundCv,
        )
      : null;
  const spread = level.checks.find((c) => c.id === 'round-spread');
  if (explanation && spread && spread.status !== 'pass') spread.detail += `; ${explanation}`;
  level.startMs = startMs;
  level.endMs = endMs;
  if (telemetry) level.telemetry = telemetry;
  const energy = input.telemetry ? levelEnergyFromRecorder(input.telemetry, [...run.warmup, ...run.measured]) : null;
  if (energy) level.energy = energy;
  return level;
}
