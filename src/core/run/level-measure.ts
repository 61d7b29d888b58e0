import type { BenchConfig } from '../../shared/config.js';
import type { RunEvent } from '../../shared/events.js';
import type { RequestRecord } from '../../shared/request-record.js';
import type { LevelResult, LevelTelemetry, ServerVariant } from '../../shared/run-record.js';
import type { Clock } from '../clock.js';
import { goodputSlo } from '../capacity/plan.js';
import type { RequestExecutor } from '../load/executor.js';
import type { LevelPlan } from '../load/level-plan.js';
import { runLevel } from '../load/level-runner.js';
import { buildLevelPrompts } from '../workloads/level-prompts.js';
import { ownLengths, promptsFromFile, sharesPrefixes, type Workload } from '../workloads/workload.js';
import type { BodyCompat } from '../load/request-body.js';
import type { PromptCounting } from '../load/server-api.js';
import type { AbortReason } from '../load/stream-client.js';
import { summarizeLevel } from '../metrics/index.js';
import type { ServerDecodeFigure } from '../metrics/checks.js';
import { clientErrorFix, commonestError } from '../metrics/error-summary.js';
import { outputCounted } from '../metrics/request-metrics.js';
import type { RunWriter } from '../runs/run-store.js';
import { hostPressureBetween, readProcFile, sampleHostPressure, type ProcReader } from '../telemetry/host-pressure.js';
import { levelEnergyFromRecorder } from '../telemetry/level-energy.js';
import type { TelemetryChecks, TelemetryRecorder } from '../telemetry/types.js';

/**
 * When every request of a server configuration's first level's first batch (its warm-up, or its first round when
 * warm-up is off) got the same client error (4xx, not 408/429, which pass with time), no measurement can succeed:
 * the reason to stop, quoting the server and naming the fix. Null otherwise.
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

/** The engine's own per-level decode figure from its /metrics, for the streaming check (null where not scraped). */
function engineDecodeFigure(telemetry: LevelTelemetry | undefined): ServerDecodeFigure | null {
  const meanMs = telemetry?.engineDecodeMeanMs;
  const requests = telemetry?.engineDecodeRequests;
  if (typeof meanMs !== 'number' || typeof requests !== 'number') return null;
  return { meanMs, requests, source: "the engine's /metrics decode-time histogram" };
}

/**
 * A prompt file read round again: how many of the level's measured requests resend a record this server configuration
 * already sent (records are used in order from `first`, wrapping at the end of the file).
 */
function repeatedRecords(workload: Workload, first: number, plan: LevelPlan): number {
  if (workload.kind !== 'file') return 0;
  const measuredFirst = first + plan.warmup;
  const end = measuredFirst + plan.rounds * plan.requestsPerRound;
  return Math.max(0, end - Math.max(workload.entries.length, measuredFirst));
}

/** What measuring one level needs: its plan, the server session's collaborators and the run's counters. */
export interface LevelMeasureInput {
  plan: LevelPlan;
  levelIndex: number;
  serverConfigIndex: number;
  serverVariant?: ServerVariant;
  config: BenchConfig;
  clock: Clock;
  executor: RequestExecutor;
  counting: PromptCounting;
  workload: Workload;
  /** The server's context in tokens, when known: a longer workload request is refused up front. */
  contextTokens?: number;
  /** Tokens of the opening every unique prompt shares, by the server's count (null: unknown). */
  openingTokens?: number | null;
  compat: BodyCompat;
  model: string;
  runNonce: number;
  tagPrefix: string;
  firstId: number;
  firstPromptIndex: number;
  /** The first level of its server configuration: a first batch all refused with one 4xx stops the run. */
  firstOfServer: boolean;
  /** The level's first prompt-file record, counted within its server configuration (each replays the same ones). */
  firstRecord?: number;
  signal: AbortSignal;
  emit: (event: RunEvent) => void;
  writer: RunWriter;
  telemetry: TelemetryRecorder | null;
  telemetryChecks?: TelemetryChecks;
  simulated: boolean;
  /** Ends the run as failed with this reason (the level's warm-up showed no request can succeed). */
  stopRun: (reason: string) => void;
  /** Reads the host's CPU pressure files (default: the real /proc); tests pass their own. */
  readProc?: ProcReader;
}

/** Measures one level: prompts, optional cool-down, warm-up and rounds, then its metrics, checks and energy; null when nothing was measured. */
export async function measureLevel(input: LevelMeasureInput): Promise<LevelResult | null> {
  const { plan, levelIndex, config, emit, signal } = input;
  emit({
    type: 'level-started',
    levelIndex,
    concurrency: plan.concurrency,
    rate: plan.rate,
    burst: plan.burst,
    inputLen: plan.inputLen,
    outputLen: plan.outputLen,
    ...(ownLengths(input.workload).input ? { inputFromFile: true } : {}),
    ...(ownLengths(input.workload).output ? { outputFromFile: true } : {}),
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
    firstRecord: input.firstRecord,
    uniquePrefix: config.uniquePrefix,
    ...input.counting,
    countMessages: input.counting.countMessages ?? null,
    api: config.api,
    contextTokens: input.contextTokens,
    signal,
  });
  if (signal.aborted) return null;
  // Said once, before the level runs: its input-length check will fail, and this is why.
  const calibration = prompts.find((p) => p?.inexact !== undefined)?.inexact;
  if (calibration) emit({ type: 'message', severity: 'warn', text: calibration });
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
  const readProc = input.readProc ?? readProcFile;
  const pressureAtStart = sampleHostPressure(readProc, startMs);
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
    countMessages: input.counting.countMessages,
    signal,
    onEvent: emit,
    onRecords: (records: RequestRecord[]) => {
      void input.writer.appendRequests(records);
      // Called before the next round starts, so an abort here sends no further request.
      const first = records[0]?.warmup === true || (plan.warmup === 0 && records[0]?.round === 0);
      const stop = input.firstOfServer && first ? firstBatchClientError(records, plan) : null;
      if (stop) input.stopRun(stop);
    },
  });
  const loopLagP99Ms = await input.executor.endLagWindow();
  const endMs = input.clock.nowMs();
  const hostPressure = hostPressureBetween(pressureAtStart, sampleHostPressure(readProc, endMs));
  if (run.measured.length === 0) return null;
  const measuredOk = run.measured.filter((r) => r.ok);
  // An impossible server count leaves J per output token out (0 tokens: the summary gives no ratio).
  const outputTokens = measuredOk.every(outputCounted) ? measuredOk.reduce((s, r) => s + r.nOut, 0) : 0;
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
  // File lengths: the level is named by the mean of its requests' own lengths, as a trace's is.
  const own = ownLengths(input.workload);
  const mean = (pick: (r: RequestRecord) => number): number =>
    Math.round(run.measured.reduce((s, r) => s + pick(r), 0) / run.measured.length);
  const level = summarizeLevel({
    records: [...run.warmup, ...run.measured],
    concurrency: plan.concurrency,
    rate: plan.rate,
    burst: plan.burst,
    inputLen: own.input ? mean((r) => r.expectedIn) : plan.inputLen,
    outputLen: own.output ? mean((r) => r.expectedOut) : plan.outputLen,
    rounds: run.roundsCompleted,
    warmupRequests: run.warmup.length,
    serverConfigIndex: input.serverConfigIndex,
    serverVariant: input.serverVariant,
    gpuPricePerHour: config.gpuPricePerHour,
    utilization: config.utilization,
    slo: goodputSlo(config),
    uniquePrefix: config.uniquePrefix,
    sharedPrefixes: sharesPrefixes(input.workload),
    promptsFromFile: promptsFromFile(input.workload),
    repeatedRecords: repeatedRecords(input.workload, input.firstRecord ?? input.firstPromptIndex, plan),
    prefixCacheHitsDelta: telemetry?.prefixCacheHits ?? null,
    openingTokens: input.openingTokens ?? null,
    loopLagP99Ms,
    hostPressure,
    engineDecode: engineDecodeFigure(telemetry),
    maxInFlight: plan.maxInFlight,
    extraChecks,
    cutShort,
    skippedTurns: run.skippedTurns,
    ...(calibration ? { calibration } : {}),
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
