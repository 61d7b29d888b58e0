import { structuredAskText } from '../../shared/structured-output.js';
import { spendIntervals } from '../metrics/precision.js';
import { precisionWatch } from './precision-watch.js';
import type { BenchConfig } from '../../shared/config.js';
import type { RunEvent } from '../../shared/events.js';
import type { RequestRecord } from '../../shared/request-record.js';
import type { LevelPrecision, LevelResult, LevelTelemetry, ServerVariant } from '../../shared/run-record.js';
import type { Clock } from '../clock.js';
import { goodputSlo } from '../capacity/plan.js';
import type { RequestExecutor } from '../load/executor.js';
import type { LevelPlan } from '../load/level-plan.js';
import { runLevel, type LevelRunOutput, type LoraLoad } from '../load/level-runner.js';
import type { Prompt } from '../load/prompts.js';
import { buildLevelPrompts, type LevelPromptsInput } from '../workloads/level-prompts.js';
import { groupPoolingPrompts, inputPositions } from '../workloads/pooling-prompts.js';
import { isPooling } from '../../shared/endpoint-kinds.js';
import { ownLengths, promptsFromFile, sharesPrefixes, type Workload } from '../workloads/workload.js';
import type { BodyCompat } from '../load/request-body.js';
import type { PromptCounting } from '../load/server-api.js';
import type { AbortReason } from '../load/stream-client.js';
import { summarizeLevel } from '../metrics/index.js';
import type { LevelAccumulator } from '../metrics/level-accumulator.js';
import { EXACT_VALUES_MAX, SKETCH_RELATIVE_ERROR } from '../metrics/sample-column.js';
import type { ServerDecodeFigure } from '../metrics/streaming-check.js';
import { clientErrorFix, commonestError } from '../metrics/error-summary.js';
import { outputCounted } from '../metrics/request-metrics.js';
import type { RunWriter } from '../runs/run-store.js';
import { hostPressureBetween, readProcFile, sampleHostPressure, type ProcReader } from '../telemetry/host-pressure.js';
import { levelEnergyFromRecorder } from '../telemetry/level-energy.js';
import type { TelemetryRecorder } from '../telemetry/types.js';
import type { HostPressure } from '../../shared/run-record.js';

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

/**
 * Watches a level's first batch as its records finish, for firstBatchClientError: it keeps them only while every one
 * failed (a refused request is a small record), and stops keeping at the first success.
 */
class FirstBatch {
  private failed: RequestRecord[] | null = [];

  constructor(private readonly plan: LevelPlan) {}

  take(records: readonly RequestRecord[]): void {
    if (this.failed === null) return;
    if (records.some((r) => r.ok)) this.failed = null;
    else for (const r of records) this.failed.push(r);
  }

  verdict(): string | null {
    return this.failed === null ? null : firstBatchClientError(this.failed, this.plan);
  }
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
  /** --lora: the adapters the requests spread over, and how the engine is told which. */
  lora?: LoraLoad;
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
  simulated: boolean;
  /** Ends the run as failed with this reason (the level's warm-up showed no request can succeed); exit code 2 unless given. */
  stopRun: (reason: string, exitCode?: number) => void;
  /** Reads the host's CPU pressure files (default: the real /proc); tests pass their own. */
  readProc?: ProcReader;
}

/** Announces a level to the host (its load and lengths as given in `plan`). */
export function announceLevel(input: LevelMeasureInput, plan: LevelPlan = input.plan): void {
  input.emit({
    type: 'level-started',
    levelIndex: input.levelIndex,
    concurrency: plan.concurrency,
    rate: plan.rate,
    burst: plan.burst,
    inputLen: plan.inputLen,
    outputLen: plan.outputLen,
    ...(ownLengths(input.workload).input ? { inputFromFile: true } : {}),
    ...(ownLengths(input.workload).output ? { outputFromFile: true } : {}),
    ...(isPooling(input.config.api) && { endpoint: input.config.api, batchSize: input.config.batchSize }),
    warmupRequests: plan.warmup,
    measuredRequests: plan.rounds * plan.requestsPerRound,
    serverConfigIndex: input.serverConfigIndex,
  });
}

/** Prompt-building progress events: one per hundredth of the level's prompts, and the last. */
function promptProgress(input: LevelMeasureInput, total: number): (built: number) => void {
  const step = Math.max(1, Math.floor(total / 100));
  input.emit({ type: 'phase', levelIndex: input.levelIndex, phase: 'prompts', done: 0, total });
  return (built) => {
    if (built % step === 0 || built === total)
      input.emit({ type: 'phase', levelIndex: input.levelIndex, phase: 'prompts', done: built, total });
  };
}

/** The prompts of a level (or, with `positions`, of those places in it: a worker's share), built with the server's count. */
export async function levelPrompts(input: LevelMeasureInput, positions?: number[]): Promise<Prompt[]> {
  const { plan, config } = input;
  const count = plan.warmup + plan.rounds * plan.requestsPerRound;
  // Messages and Responses template their messages as chat does: their prompts are chat's.
  const textApi = config.api === 'completions' ? 'completions' : 'chat';
  if (!isPooling(config.api)) return buildLevelPrompts(promptsInput(input, textApi, count, positions, 1));
  // A pooling request carries --batch-size inputs: each is a prompt of the level's length, counted as text.
  const batch = config.batchSize;
  const at = positions ? inputPositions(positions, batch) : undefined;
  const inputs = await buildLevelPrompts(promptsInput(input, 'completions', count * batch, at, batch));
  return groupPoolingPrompts(config.api, inputs, batch, input.counting.pairOverhead);
}

function promptsInput(
  input: LevelMeasureInput,
  api: 'chat' | 'completions',
  count: number,
  positions: number[] | undefined,
  batch: number,
): LevelPromptsInput {
  return {
    workload: input.workload,
    plan: input.plan,
    count,
    positions,
    runNonce: input.runNonce,
    firstIndex: input.firstPromptIndex * batch,
    firstRecord: input.firstRecord,
    uniquePrefix: input.config.uniquePrefix,
    ...input.counting,
    countMessages: input.counting.countMessages ?? null,
    api,
    contextTokens: input.contextTokens,
    signal: input.signal,
    onBuilt: promptProgress(input, positions?.length ?? count),
  };
}

/** Waits for the GPU to cool down before a level when asked (--cool-down-to), at most 10 minutes. */
export async function coolDown(input: LevelMeasureInput): Promise<void> {
  const { config, emit, signal, levelIndex } = input;
  if (config.coolDownToC === undefined || !input.telemetry?.waitCool) return;
  if (!input.telemetry.gpuStatus.available) {
    emit({ type: 'message', severity: 'warn', text: 'cannot wait for the GPU to cool down: no GPU telemetry' });
    return;
  }
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
}

/** What running a level's requests gave, before its summary: the records, its span and the client's own lag. */
export interface LevelRun {
  output: LevelRunOutput;
  startMs: number;
  endMs: number;
  loopLagP99Ms: number | null;
  /** Why it was cut short, when it was (the level's abort reason). */
  abortReason?: Partial<AbortReason>;
  /** The host's CPU pressure over the level (a busy host is named as such), where the system tells it. */
  hostPressure?: HostPressure | null;
  /** Why prompt calibration could not reach the asked length, when it could not. */
  calibration?: string;
  /** With --precision: the last look at the level's figures (see precision.ts). */
  precision?: LevelPrecision;
}

/** Hooks of a level run that is one worker's share of a distributed level. */
export interface LevelRunHooks {
  /** Awaited before the warm-up (-1) and each round: every worker starts a batch at one instant. */
  beforeBatch?: (round: number) => Promise<void>;
  /** Sees (and may renumber) each finished batch before it is written. */
  onBatch?: (records: RequestRecord[]) => void;
}

/** Runs the level's warm-up and rounds with `prompts`, writing each batch as it finishes; the first batch may stop the run. */
export async function runLevelRequests(
  input: LevelMeasureInput,
  prompts: Prompt[],
  hooks: LevelRunHooks = {},
): Promise<LevelRun> {
  const { plan, config, signal } = input;
  // Said once, before the level runs: its input-length check will fail, and this is why.
  const calibration = prompts.find((p) => p?.inexact !== undefined)?.inexact;
  if (calibration) input.emit({ type: 'message', severity: 'warn', text: calibration });
  const startMs = input.clock.nowMs();
  const readProc = input.readProc ?? readProcFile;
  const pressureAtStart = sampleHostPressure(readProc, startMs);
  input.executor.startLagWindow();
  // The first batch of a server configuration's first level: all refused with one 4xx stops the run.
  let firstBatch: FirstBatch | null = input.firstOfServer ? new FirstBatch(plan) : null;
  // A distributed level's workers cannot stop alone: it runs every planned round.
  const precision = hooks.beforeBatch ? null : precisionWatch(config.precision, plan.rounds);
  const output = await runLevel({
    plan,
    levelIndex: input.levelIndex,
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
    ...(input.lora ? { lora: input.lora } : {}),
    ...(input.workload.structured && { structured: input.workload.structured }),
    signal,
    onEvent: input.emit,
    beforeBatch: hooks.beforeBatch,
    ...(precision && { stopAfterRound: precision.stopAfterRound }),
    onRecords: (records: RequestRecord[]) => {
      hooks.onBatch?.(records);
      void input.writer.appendRequests(records);
      firstBatch?.take(records);
    },
    // Called before the next round starts, so an abort here sends no further request.
    onBatchDone: () => {
      const stop = firstBatch?.verdict() ?? null;
      firstBatch = null;
      if (stop) input.stopRun(stop);
    },
  });
  const loopLagP99Ms = await input.executor.endLagWindow();
  const endMs = input.clock.nowMs();
  const hostPressure = hostPressureBetween(pressureAtStart, sampleHostPressure(readProc, endMs));
  const abortReason = output.aborted ? (signal.reason as Partial<AbortReason> | undefined) : undefined;
  return {
    output,
    ...(precision?.last() && { precision: precision.last()! }),
    startMs,
    endMs,
    loopLagP99Ms,
    hostPressure,
    ...(abortReason ? { abortReason } : {}),
    ...(calibration ? { calibration } : {}),
  };
}

/** Measures one level: prompts, optional cool-down, warm-up and rounds, then its metrics, checks and energy; null when nothing was measured. */
export async function measureLevel(input: LevelMeasureInput): Promise<LevelResult | null> {
  announceLevel(input);
  const prompts = await levelPrompts(input);
  if (input.signal.aborted) return null;
  await coolDown(input);
  return summarizeLevelRun(input, await runLevelRequests(input, prompts));
}

/** Says so when a level outgrew what is kept of it whole: which figures then rest on a sample or a sketch. */
function noteBoundedLevel(input: LevelMeasureInput, acc: LevelAccumulator): void {
  const sample = acc.streamSample;
  if (sample)
    input.emit({
      type: 'message',
      severity: 'info',
      text: `level ${input.levelIndex + 1}: the streaming and token-agreement checks judged a uniform sample of ${sample.kept} of its ${sample.of} requests (the rest are in requests.jsonl); every other figure covers them all`,
    });
  if (acc.sketched)
    input.emit({
      type: 'message',
      severity: 'info',
      text: `level ${input.levelIndex + 1}: over ${EXACT_VALUES_MAX.toLocaleString('en-US')} values, its percentiles come from a sketch within ${SKETCH_RELATIVE_ERROR * 100} % of the exact value (count, mean, min and max stay exact)`,
    });
}

/** A level's metrics, checks, telemetry and energy from its run (the records of one process, or of every worker merged). */
export function summarizeLevelRun(input: LevelMeasureInput, levelRun: LevelRun): LevelResult | null {
  const { plan, config } = input;
  const run = levelRun.output;
  if (run.measured.length === 0) return null;
  const measuredOk = run.measured.filter((r) => r.ok);
  // An impossible server count leaves J per output token out (0 tokens: the summary gives no ratio).
  const outputTokens = measuredOk.every(outputCounted) ? measuredOk.reduce((s, r) => s + r.nOut, 0) : 0;
  const telemetry =
    input.telemetry && run.measureStartMs !== null && run.measureEndMs !== null
      ? input.telemetry.summarizeWindow(run.measureStartMs, run.measureEndMs, outputTokens)
      : undefined;
  const abortReason = levelRun.abortReason;
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
  if (run.accumulated) noteBoundedLevel(input, run.accumulated);
  const level = summarizeLevel({
    records: [...run.warmup, ...run.measured],
    accumulated: run.accumulated,
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
    structuredAsk: structuredAskText(config),
    sharedPrefixes: sharesPrefixes(input.workload),
    promptsFromFile: promptsFromFile(input.workload),
    repeatedRecords: repeatedRecords(input.workload, input.firstRecord ?? input.firstPromptIndex, plan),
    prefixCacheHitsDelta: telemetry?.prefixCacheHits ?? null,
    openingTokens: input.openingTokens ?? null,
    loopLagP99Ms: levelRun.loopLagP99Ms,
    hostPressure: levelRun.hostPressure ?? null,
    engineDecode: engineDecodeFigure(telemetry),
    maxInFlight: plan.maxInFlight,
    ...(input.telemetry ? { telemetry: telemetry ? { summary: telemetry } : {} } : {}),
    cutShort,
    skippedTurns: run.skippedTurns,
    endpoint: config.api,
    batchSize: config.batchSize,
    ...(levelRun.calibration ? { calibration: levelRun.calibration } : {}),
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
  level.startMs = levelRun.startMs;
  level.endMs = levelRun.endMs;
  if (telemetry) level.telemetry = telemetry;
  if (levelRun.precision) {
    level.precision = levelRun.precision;
    spendIntervals(level, run.measured, levelRun.precision.confidence);
  }
  const energy = input.telemetry ? levelEnergyFromRecorder(input.telemetry, [...run.warmup, ...run.measured]) : null;
  if (energy) level.energy = energy;
  return level;
}
