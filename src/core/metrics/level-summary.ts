import type { Slo } from '../../shared/config.js';
import type { RequestRecord } from '../../shared/request-record.js';
import type {
  HostPressure,
  LevelResult,
  LevelTelemetry,
  RoundResult,
  ServerVariant,
  TtftSplit,
  TurnResult,
} from '../../shared/run-record.js';
import { levelEvidence, type CutShort } from '../checks/evidence.js';
import { levelChecks } from '../checks/registry.js';
import type { ServerDecodeFigure } from './streaming-check.js';
import { costPerMillionOutputTokens } from './cost.js';
import { commonestError } from './error-summary.js';
import { goodput } from './goodput.js';
import { summarize } from './percentiles.js';
import { isCancelled, isMeasured, outputCounted, poolLatencies, usageRejected } from './request-metrics.js';
import { offeredLoadOf } from './offered-load.js';
import { coalescedItlFinding } from './coalesced-itl.js';
import { LevelAccumulator } from './level-accumulator.js';
import { addPoolingFigures } from './pooling-summary.js';
import type { EndpointKind } from '../../shared/endpoint-kinds.js';
import { responseCacheOf } from './response-cache.js';
import { ttftSplit } from './ttft-split.js';
import { requestEndBound, roundCv, roundResults } from './throughput.js';
import { groupBreakdown } from './group-breakdown.js';

/** Everything summarizeLevel needs besides the records: the level's conditions and the run's options. */
export interface LevelSummaryInput {
  /** All records of the level, warm-up included (they are excluded from metrics here); condensed ones once `accumulated` sampled. */
  records: RequestRecord[];
  /** The level summarised as its requests finished (columns and whole-record sample); built from `records` when absent. */
  accumulated?: LevelAccumulator;
  concurrency: number;
  rate?: number;
  burst?: number;
  inputLen: number;
  outputLen: number;
  /**
   * Rounds that COMPLETED (numbered from 0). Records of a later round belong to a round cut short (cancel, server
   * died): it is kept in rounds[] flagged partial and left out of the throughput means, roundCv and round spread.
   */
  rounds: number;
  /** Warm-up requests sent (the warmup check judges the warm-up records among records). */
  warmupRequests: number;
  serverConfigIndex: number;
  serverVariant?: ServerVariant;
  gpuPricePerHour?: number;
  utilization?: number;
  slo?: Slo;
  uniquePrefix: boolean;
  /** --response-format or --tools, in the flags' words: the structured-output check judges the answers by it. */
  structuredAsk?: string | null;
  /** The workload shares prompt prefixes on purpose (shared-prefix groups, a trace's hash ids). */
  sharedPrefixes?: boolean;
  /** Prompts came from a file as written (see PrefixCacheInput). */
  promptsFromFile?: boolean;
  /** File prompts: measured requests whose record this server configuration had already sent. */
  repeatedRecords?: number;
  prefixCacheHitsDelta?: number | null;
  /** Tokens of the opening every unique prompt shares (chat template, first words); null when not counted. */
  openingTokens?: number | null;
  loopLagP99Ms?: number | null;
  /** The host's CPU pressure over the level, where readable (the client and streaming checks name a busy host). */
  hostPressure?: HostPressure | null;
  /** The engine's own mean decode time per request over the level (vLLM's /metrics histogram), when scraped. */
  engineDecode?: ServerDecodeFigure | null;
  /** Open loop: the --max-concurrency cap (absent: none); sends it held back are not the client's lag. */
  maxInFlight?: number;
  /** The level's telemetry when a recorder ran (the throttling and preemptions checks judge it); absent: none ran. */
  telemetry?: { summary?: LevelTelemetry };
  /** The endpoint kind loaded (absent: chat); a pooling kind gets its own figures (pooling-summary.ts). */
  endpoint?: EndpointKind;
  /** Pooling kinds: inputs per request. */
  batchSize?: number;
  /** Multi-turn: measured turns not sent because an earlier turn of their conversation failed. */
  skippedTurns?: number;
  /** Why prompt calibration could not make the prompts the asked length, when it could not (see prompts.ts fit). */
  calibration?: string;
  /** Set when the level was cut short (server died, user cancelled): marks it partial and adds the cut-short check. */
  cutShort?: CutShort;
}

function mean(values: readonly number[]): number {
  return values.length === 0 ? 0 : values.reduce((a, b) => a + b, 0) / values.length;
}

/** Where n_out came from over the ok requests (no ok requests: nothing was counted by the server). */
function outputTokensSource(ok: readonly RequestRecord[]): LevelResult['outputTokensSource'] {
  const server = ok.filter((r) => r.nOutSource === 'server').length;
  if (ok.length > 0 && server === ok.length) return 'server';
  if (server === 0) return 'estimated';
  return 'mixed';
}

/** TTFO and the reasoning/answer token split, for levels whose streams carried reasoning. */
function reasoningSummary(
  acc: LevelAccumulator,
): Pick<LevelResult, 'ttfoMs' | 'reasoningTokens' | 'contentTokens' | 'reasoningTokensSource'> {
  const pooled = acc.pooled;
  const n = pooled.reasoningTokens.n;
  const fromServer = acc.reasoningFromServer;
  return {
    ttfoMs: pooled.ttfoMs.summary(),
    reasoningTokens: pooled.reasoningTokens.summary(),
    contentTokens: pooled.contentTokens.summary(),
    reasoningTokensSource: fromServer === n ? 'server' : fromServer === 0 ? 'estimated' : 'mixed',
  };
}

/** Multi-turn: TTFT and mean prompt tokens per turn index over the ok measured requests; null for other levels. */
export function turnResults(measured: readonly RequestRecord[]): TurnResult[] | null {
  const byTurn = new Map<number, RequestRecord[]>();
  for (const r of measured) {
    const turn = r.workload?.turn;
    if (turn === undefined) continue;
    const list = byTurn.get(turn);
    if (list) list.push(r);
    else byTurn.set(turn, [r]);
  }
  if (byTurn.size === 0) return null;
  return [...byTurn.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([turn, records]) => {
      const ok = records.filter((r) => r.ok);
      return {
        turn,
        inputTokens: ok.length > 0 ? mean(ok.map((r) => r.nIn ?? r.expectedIn)) : null,
        ttftMs: summarize(poolLatencies(ok).ttftMs),
      };
    });
}

function errorsByReasonOf(measured: readonly RequestRecord[]): Record<string, number> {
  const errorsByReason: Record<string, number> = {};
  for (const r of measured) {
    if (r.ok || isCancelled(r)) continue;
    const kind = r.errorKind ?? 'unknown';
    errorsByReason[kind] = (errorsByReason[kind] ?? 0) + 1;
  }
  return errorsByReason;
}

// The level's span includes warm-up: it is the stretch of GPU time (and telemetry) this level occupied.
function levelSpan(all: readonly RequestRecord[]): { startMs: number; endMs: number } {
  const startMs = all.length > 0 ? all.reduce((a, r) => Math.min(a, r.scheduledMs ?? r.sendMs, r.sendMs), Infinity) : 0;
  const endMs = all.length > 0 ? all.reduce((a, r) => Math.max(a, requestEndBound(r)), -Infinity) : 0;
  return { startMs, endMs };
}

function addCost(result: LevelResult, input: LevelSummaryInput, outputTokPerSec: number): void {
  if (input.gpuPricePerHour === undefined) return;
  // Peak: the GPU busy the whole hour at this level's throughput.
  const peak = costPerMillionOutputTokens(input.gpuPricePerHour, outputTokPerSec);
  if (peak !== null) result.costPerMOutputTokUsd = peak;
  if (input.utilization !== undefined) {
    const atU = costPerMillionOutputTokens(input.gpuPricePerHour, outputTokPerSec, input.utilization);
    if (atU !== null) result.costPerMOutputTokAtUtilizationUsd = atU;
  }
}

// How the load was offered: the sends' lag behind their schedule, open or closed loop, and the offered load itself.
function loadOf(input: LevelSummaryInput, measured: readonly RequestRecord[]) {
  const scheduleLags = measured.filter((r) => r.scheduledMs !== undefined).map((r) => r.sendMs - r.scheduledMs!);
  const scheduleLagMs = scheduleLags.length > 0 ? summarize(scheduleLags) : undefined;
  const openLoop = scheduleLags.length > 0 || input.rate !== undefined || input.burst !== undefined;
  // Over the complete rounds, as throughput: a round cut short ends all at once. With none, figures but no verdict.
  const completeRecords = measured.filter((r) => r.round < input.rounds);
  const judgeOffered = completeRecords.length > 0;
  const offered = offeredLoadOf(judgeOffered ? completeRecords : measured, {
    concurrency: input.concurrency,
    openLoop,
    cap: input.maxInFlight,
  });
  // The client answers for the lag of the sends it made late, not of those a full cap held back.
  const clientLags = offered.clientLagged.map((r) => r.sendMs - r.scheduledMs!);
  return { scheduleLagMs, openLoop, judgeOffered, offered, clientLags };
}

type OfferedLoad = ReturnType<typeof offeredLoadOf>;

/** What summarizeLevel measured that the level's checks judge, besides its input. */
interface LevelFacts {
  all: RequestRecord[];
  streams: RequestRecord[];
  rounds: LevelResult['rounds'];
  ttftMs: LevelResult['ttftMs'];
  e2eMs: LevelResult['e2eMs'];
  openLoop: boolean;
  clientLags: number[];
  offered: OfferedLoad['offered'] | null;
  offeredRate: OfferedLoad['rate'];
  multiTurn: boolean;
  itlFinding: ReturnType<typeof coalescedItlFinding>;
  responseCache: ReturnType<typeof responseCacheOf>;
  split: TtftSplit | null;
}

function judgeLevel(input: LevelSummaryInput, facts: LevelFacts): LevelResult['checks'] {
  return levelChecks(
    levelEvidence({
      records: facts.all,
      streamRecords: facts.streams,
      rounds: facts.rounds,
      ttftMs: facts.ttftMs,
      ...(input.endpoint && { endpoint: input.endpoint }),
      e2eMs: facts.e2eMs,
      openLoop: facts.openLoop,
      clientLagsMs: facts.clientLags,
      load: {
        offered: facts.offered,
        askedConcurrency: facts.openLoop ? undefined : input.concurrency,
        askedRate: input.rate,
        rateLateMs: facts.offeredRate?.lateMs,
        rateRounds: facts.offeredRate?.rounds,
        cap: input.maxInFlight,
        loopLagP99Ms: input.loopLagP99Ms ?? null,
      },
      prompts: {
        uniquePrefix: input.uniquePrefix,
        sharedPrefixes: input.sharedPrefixes ?? false,
        promptsFromFile: input.promptsFromFile ?? false,
        repeatedRecords: input.repeatedRecords ?? 0,
        openingTokens: input.openingTokens ?? null,
        multiTurn: facts.multiTurn,
      },
      coalescedItl: facts.itlFinding,
      responseCache: facts.responseCache,
      ttftSplit: facts.split,
      calibration: input.calibration,
      skippedTurns: input.skippedTurns,
      host: input.hostPressure,
      engineDecode: input.engineDecode,
      prefixCacheHitsDelta: input.prefixCacheHitsDelta,
      cutShort: input.cutShort,
      structuredAsk: input.structuredAsk ?? null,
      telemetry: input.telemetry ?? null,
    }),
  );
}

/**
 * One level's result from its request records: latency summaries, per-round throughput and their means, round
 * spread, cost, goodput and every metrics check. Warm-up requests bound the level's span but count nowhere else
 * (besides the warmup check). Throughput means, roundCv and round spread cover the complete rounds only (null, and no
 * cost, when none completed; the round-spread and cut-short checks say so); latency summaries cover every ok
 * measured request.
 * User-cancelled requests are counted in cancelled, not in failed. telemetry is left for the telemetry module to add.
 */
export function summarizeLevel(input: LevelSummaryInput): LevelResult {
  const all = input.records;
  const measured = all.filter(isMeasured);
  const ok = measured.filter((r) => r.ok);
  const cancelled = measured.filter(isCancelled).length;
  const acc = input.accumulated ?? LevelAccumulator.of(all);
  const pooled = acc.pooled;
  // The checks that read each stream's chunks judge the whole records: all of them, or the accumulator's sample.
  const streams = acc.streamRecords;
  const rounds = roundResults(measured, input.rounds);
  const complete = rounds.filter((r) => r.partial !== true);
  // With no complete round there is no throughput: a partial round's window is not filled by its requests.
  const noThroughput = complete.length === 0 && rounds.length > 0;
  const rate = (pick: (r: (typeof rounds)[number]) => number): number | null =>
    noThroughput ? null : mean(complete.map(pick));
  // A token count the server got impossibly wrong leaves every rate built on it out (req/s does not rest on it).
  const uncounted = ok.filter((r) => !outputCounted(r)).length;
  const promptsUncounted = ok.some((r) => usageRejected(r, 'prompt_tokens'));
  const outputTokPerSec = uncounted > 0 ? null : rate((r) => r.outputTokPerSec);
  const malformedLines = measured.reduce((a, r) => a + r.malformedLines, 0);

  const { scheduleLagMs, openLoop, judgeOffered, offered, clientLags } = loadOf(input, measured);

  const errorsByReason = errorsByReasonOf(measured);

  const ttftMs = pooled.ttftMs.summary();
  const e2eMs = pooled.e2eMs.summary();
  const itlMs = pooled.itlMs.summary();
  const tpotMs = pooled.tpotMs.summary();
  const { coalesced, serverItlMs } = acc.coalescedItl();
  const itlFinding = coalescedItlFinding(coalesced, itlMs.p50, serverItlMs?.p50 ?? null, tpotMs.p50);
  const turns = turnResults(measured);
  const responseCache = responseCacheOf(ok, input.openingTokens ?? null);
  const split = ttftSplit(ok, input.telemetry?.summary);
  const checks = judgeLevel(input, {
    split,
    all,
    streams,
    rounds,
    ttftMs,
    e2eMs,
    openLoop,
    clientLags,
    offered: judgeOffered ? offered.offered : null,
    offeredRate: offered.rate,
    multiTurn: turns !== null,
    itlFinding,
    responseCache,
  });

  const { startMs, endMs } = levelSpan(all);

  const result: LevelResult = {
    serverConfigIndex: input.serverConfigIndex,
    concurrency: input.concurrency,
    inputLen: input.inputLen,
    outputLen: input.outputLen,
    startMs,
    endMs,
    warmupRequests: input.warmupRequests,
    rounds,
    ttftMs,
    tpotMs,
    itlMs,
    itlPerTokenMs: pooled.itlPerTokenMs.summary(),
    e2eMs,
    tokensPerChunk: pooled.tokensPerChunk.summary(),
    outputTokPerSec,
    totalTokPerSec: uncounted > 0 || promptsUncounted ? null : rate((r) => r.totalTokPerSec),
    reqPerSec: rate((r) => r.reqPerSec),
    roundCv: uncounted > 0 ? null : roundCv(complete),
    completed: ok.length,
    failed: measured.length - ok.length - cancelled,
    malformedLines,
    outputTokensSource: outputTokensSource(ok),
    errorsByReason,
    checks,
    ...(split && { ttftSplit: split }),
  };
  addOptionalFields(result, input, {
    acc,
    coalescedShare: coalesced.share,
    serverItlMs,
    turns,
    responseCache,
    scheduleLagMs,
    offered: offered.offered,
    cancelled,
    measured,
    outputTokPerSec,
    uncounted,
    rounds,
  });
  return result;
}

/** What summarizeLevel measured that only some levels carry. */
interface OptionalFacts {
  acc: LevelAccumulator;
  coalescedShare: number | null;
  serverItlMs: LevelResult['serverItlMs'] | null;
  turns: TurnResult[] | null;
  responseCache: LevelResult['responseCache'] | null;
  scheduleLagMs: LevelResult['scheduleLagMs'];
  offered: NonNullable<LevelResult['offered']>;
  cancelled: number;
  measured: readonly RequestRecord[];
  outputTokPerSec: number | null;
  uncounted: number;
  rounds: readonly RoundResult[];
}

/** Optional fields are set only when they apply, so run.json carries no misleading nulls or zeros. */
function addOptionalFields(result: LevelResult, input: LevelSummaryInput, f: OptionalFacts): void {
  if (f.acc.pooled.reasoningTokens.n > 0) Object.assign(result, reasoningSummary(f.acc));
  if (f.coalescedShare !== null) result.itlCoalescedShare = f.coalescedShare;
  if (input.hostPressure) result.hostPressure = input.hostPressure;
  if (f.serverItlMs) result.serverItlMs = f.serverItlMs;
  if (f.turns !== null) result.byTurn = f.turns;
  const byAdapter = groupBreakdown(f.measured, f.rounds, (r) => r.adapter);
  if (byAdapter !== null) result.byAdapter = byAdapter;
  const byReplica = groupBreakdown(f.measured, f.rounds, (r) =>
    r.replica === undefined ? undefined : String(r.replica),
  );
  if (byReplica !== null) result.byReplica = byReplica;
  if (f.responseCache !== null) result.responseCache = f.responseCache;
  const judged = f.measured.filter((r) => r.ok && r.structured !== undefined);
  if (judged.length > 0) {
    result.structuredAnswers = judged.length;
    result.structuredValidRate = judged.filter((r) => r.structured?.valid).length / judged.length;
  }
  if (input.serverVariant !== undefined) result.serverVariant = input.serverVariant;
  if (input.rate !== undefined) result.rate = input.rate;
  if (input.burst !== undefined) result.burst = input.burst;
  if (f.scheduleLagMs !== undefined) result.scheduleLagMs = f.scheduleLagMs;
  if (Object.keys(f.offered).length > 0) result.offered = f.offered;
  if (f.cancelled > 0) result.cancelled = f.cancelled;
  if ((input.skippedTurns ?? 0) > 0) result.skippedTurns = input.skippedTurns;
  const topError = commonestError(f.measured);
  if (topError) result.topError = topError;
  if (input.cutShort) {
    result.partial = true;
    result.cutShort = input.cutShort.reason;
  }
  if (f.outputTokPerSec !== null) addCost(result, input, f.outputTokPerSec);
  addPoolingFigures(
    result,
    input,
    f.rounds.filter((r) => r.partial !== true),
  );
  // Goodput on a TPOT SLO rests on the output counts too.
  if (input.slo !== undefined && !(input.slo.tpotMs !== undefined && f.uncounted > 0)) {
    const g = goodput(f.measured, input.slo);
    if (g !== null) result.goodput = g;
  }
}
