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
import { buildPrompts } from './load/prompts.js';
import type { TokenCounter } from './load/prompts.js';
import type { BodyCompat } from './load/request-body.js';
import { ServerApi } from './load/server-api.js';
import { createWorkerExecutor } from './load/worker-executor.js';
import { combineChecks, summarizeLevel } from './metrics/index.js';
import { summaryCsv } from './report/summary-csv.js';
import { RUN_FILES, RunWriter, createRunDir } from './runs/run-store.js';
import type { RunningServer, ServerFailure, StartServer } from './servers/types.js';
import type { AbortReason } from './load/stream-client.js';
import { redact } from './servers/redact.js';
import { applyVariant, concurrencyWarning } from './servers/variants.js';
import type { TelemetryChecks, TelemetryRecorder } from './telemetry/types.js';
import type { ClientSample, EngineSample, GpuSample } from '../shared/telemetry.js';
import { SERVEBENCH_VERSION } from './version.js';

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
  onEvent?: (event: RunEvent) => void;
  signal?: AbortSignal;
  clock?: Clock;
  now?: () => Date;
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
  const plans = planLevels(config);
  const variants = config.serverVariants && config.serverVariants.length > 0 ? config.serverVariants : [{}];
  const serverConfigs = variants.map((variant) => {
    const server = Object.keys(variant).length === 0 ? config.server : applyVariant(config.server, variant);
    return !server.model && config.model ? { ...server, model: config.model } : server;
  });
  const startedAt = now();
  const dir = await createRunDir(config.out, config.label, startedAt);
  const writer = new RunWriter(dir);
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
    // Secrets (API key, HF_TOKEN and the like in env or arguments) never reach the record.
    config: {
      ...config,
      apiKey: config.apiKey ? '<redacted>' : undefined,
      server: redact(config.server),
      serverVariants: config.serverVariants?.map((v) => redact(v as Partial<ServerConfig>) as Record<string, unknown>),
    },
    environment: {
      host: { ...basicHost(), ...hostExtra },
      servebenchVersion: SERVEBENCH_VERSION,
      engine: {
        kind: config.server.engine,
        model: config.model ?? config.server.model,
        url: config.server.url,
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
  emit({ type: 'run-started', runId, dir, simulated, totalLevels: plans.length * variants.length });

  const userSignal = deps.signal ?? new AbortController().signal;
  const runNonce = randomBytes(4).readUInt32BE(0) % 1_000_000;
  const tagPrefix = `sb-${runNonce.toString(36)}`;
  let failure: string | undefined;
  let failureExitCode: number | undefined;
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
      levelAbort.abort({ message: 'cancelled by the user', kind: 'cancelled' } satisfies AbortReason);
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
      const maxTokensPerRequest = Math.max(...config.inputLen) + Math.max(...config.outputLen);
      const tooMany = concurrencyWarning(info, maxConc, maxTokensPerRequest, serverConfig.maxSeqs);
      if (tooMany) emit({ type: 'message', severity: 'warn', text: tooMany });
      const api = new ServerApi({ baseUrl: info.baseUrl, apiKey: config.apiKey });
      const { compat, note } = await api.probeCompat(config.api, info.model);
      if (note) emit({ type: 'message', severity: 'warn', text: note });
      const { counter, viaTokenize } = await api.tokenCounter(config.api, info.model, compat);
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

      for (const plan of plans) {
        if (levelAbort.signal.aborted) break;
        const level = await runOneLevel({
          plan,
          levelIndex,
          serverConfigIndex: vi,
          serverVariant: flatVariant,
          config,
          clock,
          executor,
          counter,
          viaTokenize,
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
        });
        nextRequestId += plan.warmup + plan.rounds * plan.requestsPerRound;
        nextPromptIndex += plan.warmup + plan.rounds * plan.requestsPerRound;
        if (level) {
          record.levels.push(level);
          emit({ type: 'level-finished', levelIndex, level });
        }
        levelIndex++;
        await writer.appendLines(RUN_FILES.telemetry, telemetryLines.splice(0));
        await writer.writeRecord(record);
      }
      // The exit is known synchronously: a death just before the last level ended still fails the run.
      serverFailure ??= server.hasDied();
      if (serverFailure) break outer;
    } catch (error) {
      serverFailure ??= server?.hasDied() ?? null;
      if (!serverFailure && !userSignal.aborted) {
        failure = error instanceof Error ? error.message : String(error);
        if (error instanceof UserError) failureExitCode = error.exitCode;
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
  await writer.writeText(RUN_FILES.summary, summaryCsv(record));
  await writer.flush();
  activeRuns.delete(active);
  for (const error of writer.errors)
    emit({ type: 'message', severity: 'error', text: `could not write to ${dir}: ${error}` });
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
  viaTokenize: boolean;
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
  const prompts = await buildPrompts({
    count: plan.warmup + plan.rounds * plan.requestsPerRound,
    targetTokens: plan.inputLen,
    runNonce: input.runNonce,
    firstIndex: input.firstPromptIndex,
    uniquePrefix: config.uniquePrefix,
    counter: input.counter,
    verifyEach: input.viaTokenize,
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
    signal,
    onEvent: emit,
    onRecords: (records: RequestRecord[]) => void input.writer.appendRequests(records),
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
    slo: config.slo,
    uniquePrefix: config.uniquePrefix,
    prefixCacheHitsDelta: telemetry?.prefixCacheHits ?? null,
    loopLagP99Ms,
    extraChecks,
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
  if (run.aborted) level.partial = true;
  return level;
}
