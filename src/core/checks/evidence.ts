import type { WorkerLevelView } from '../../shared/distributed.js';
import type { EndpointKind } from '../../shared/endpoint-kinds.js';
import type { RequestRecord } from '../../shared/request-record.js';
import type {
  HostPressure,
  LevelTelemetry,
  OfferedLoad,
  ResponseCache,
  RoundResult,
  Summary,
  TtftSplit,
} from '../../shared/run-record.js';
import type { CoalescedItlFinding } from '../metrics/coalesced-itl.js';
import { openLoopRounds, type OpenLoopRound } from '../metrics/open-loop-spread.js';
import { isMeasured, outputCounted } from '../metrics/request-metrics.js';
import type { ServerDecodeFigure } from '../metrics/streaming-check.js';
import { summarize } from '../metrics/percentiles.js';
import { impossibleUsage, type ImpossibleUsage } from '../metrics/usage-checks.js';

/** Why a level was cut short, as summarizeLevel is told it. */
export interface CutShort {
  /** One line, e.g. "the server died: CUDA out of memory" or "cancelled by the user". */
  reason: string;
  /** True when the server failed (a crash), false for a user cancel. */
  byServer: boolean;
}

/** How the level's prompts were made: what the prefix-cache check holds its hits against. */
interface PromptEvidence {
  uniquePrefix: boolean;
  /** Requests share prefixes on purpose (shared-prefix groups, trace hash ids): hits are the point, not a flaw. */
  sharedPrefixes: boolean;
  /** Prompts from a file, sent as written: they share what real prompts share. */
  promptsFromFile: boolean;
  /** File prompts: measured requests whose record was already sent on this server configuration. */
  repeatedRecords: number;
  /** Tokens of the opening every unique prompt shares (chat template, first words); null when not counted. */
  openingTokens: number | null;
  /** Multi-turn level: later turns resend the history. */
  multiTurn: boolean;
}

/** The load the level asked for and what the client did about it (the client check's evidence). */
interface LoadEvidence {
  /** The load really offered over the complete rounds; null when no round completed (figures, no verdict). */
  offered: OfferedLoad | null;
  /** Closed loop: the asked concurrency (absent in open loop). */
  askedConcurrency?: number;
  /** Open loop: the asked rate (req/s), how late the sends were (summed over rounds) and over how many rounds. */
  askedRate?: number;
  rateLateMs?: number;
  rateRounds?: number;
  /** Open loop: the --max-concurrency cap, if any. */
  cap?: number;
  /** The client's event-loop lag p99 (ms), null where not measured. */
  loopLagP99Ms: number | null;
  /** Open loop: schedule lag p99 over the sends the client answers for (not those a full cap held); else null. */
  scheduleLagP99Ms: number | null;
}

/** Everything a level's checks judge: one object per level, built by levelEvidence. */
export interface LevelEvidence {
  /** All records of the level, warm-up included. */
  records: readonly RequestRecord[];
  /** The measured records (warm-up left out). */
  measured: readonly RequestRecord[];
  /** Measured records whose chunks are whole, for the checks that read each stream: all, or a bounded sample. */
  streams: readonly RequestRecord[];
  /** The level's rounds, a round cut short flagged partial. */
  rounds: readonly RoundResult[];
  /** Ok requests whose output count the server got impossibly wrong (no per-round throughput then). */
  uncountedRequests: number;
  /** Open loop: the complete rounds' arrivals; null in closed loop. */
  openLoopRounds: OpenLoopRound[] | null;
  ttftMs: Summary;
  /** The endpoint kind loaded: a pooling kind (embeddings, rerank) streams nothing and generates no tokens. */
  endpoint: EndpointKind;
  /** E2E latency: a pooling level's percentiles rest on it, as a generation's rest on TTFT. */
  e2eMs: Summary | null;
  /** Why prompt calibration could not make the prompts the asked length; null when it could. */
  calibration: string | null;
  /** Multi-turn: measured turns not sent because an earlier turn of their conversation failed. */
  skippedTurns: number;
  load: LoadEvidence;
  /** The host's CPU pressure over the level, where readable. */
  host: HostPressure | null;
  /** The engine's own mean decode time per request over the level, when scraped. */
  engineDecode: ServerDecodeFigure | null;
  /** ITL dominated by events read together (see coalesced-itl.ts); null when it is not. */
  coalescedItl: CoalescedItlFinding | null;
  prompts: PromptEvidence;
  /** Growth of the engine's prefix-cache hit counter over the level, when it exposes one. */
  prefixCacheHitsDelta: number | null;
  /** Cached prompt tokens the server's responses reported, when they did. */
  responseCache: ResponseCache | null;
  /** Responses whose cached_tokens could not be true (left out of responseCache). */
  impossibleCached: ImpossibleUsage | null;
  /** Set when the level was cut short. */
  cutShort: CutShort | null;
  /** Where the level's TTFT went (see ttft-split.ts); null without a TTFT. */
  ttftSplit: TtftSplit | null;
  /** The level's GPU and engine telemetry when a recorder ran (summary absent: nothing recorded); null: none ran. */
  telemetry: { summary?: LevelTelemetry } | null;
  /** Distributed: each worker's part of the level; null for one process. */
  workers: readonly WorkerLevelView[] | null;
  /** --response-format or --tools in the flags' words; null when the run asked for no structured output. */
  structuredAsk: string | null;
}

/** What levelEvidence is given: the level's records and the figures its summary computed from them. */
export interface LevelEvidenceInput {
  records: readonly RequestRecord[];
  /** Records whose chunks are whole (a big level keeps a sample); absent: every record is whole. */
  streamRecords?: readonly RequestRecord[];
  rounds: readonly RoundResult[];
  ttftMs: Summary;
  /** Absent: chat (levels summarised before endpoint kinds were declared). */
  endpoint?: EndpointKind;
  e2eMs?: Summary;
  /** The level runs on a schedule (rate or burst). */
  openLoop: boolean;
  /** Schedule lags of the sends the client answers for (ms). */
  clientLagsMs: readonly number[];
  load: Omit<LoadEvidence, 'scheduleLagP99Ms'>;
  prompts: PromptEvidence;
  coalescedItl: CoalescedItlFinding | null;
  responseCache: ResponseCache | null;
  ttftSplit?: TtftSplit | null;
  calibration?: string;
  skippedTurns?: number;
  host?: HostPressure | null;
  engineDecode?: ServerDecodeFigure | null;
  prefixCacheHitsDelta?: number | null;
  cutShort?: CutShort;
  telemetry?: { summary?: LevelTelemetry } | null;
  workers?: readonly WorkerLevelView[] | null;
  structuredAsk?: string | null;
}

/** The one place a level's evidence is built, from its records and the figures summarizeLevel computed. */
export function levelEvidence(input: LevelEvidenceInput): LevelEvidence {
  const measured = input.records.filter(isMeasured);
  const ok = measured.filter((r) => r.ok);
  const complete = input.rounds.filter((r) => r.partial !== true);
  return {
    records: input.records,
    measured,
    streams: input.streamRecords ? input.streamRecords.filter(isMeasured) : measured,
    rounds: input.rounds,
    uncountedRequests: ok.filter((r) => !outputCounted(r)).length,
    openLoopRounds: input.openLoop ? openLoopRounds(measured, complete) : null,
    ttftMs: input.ttftMs,
    endpoint: input.endpoint ?? 'chat',
    e2eMs: input.e2eMs ?? null,
    calibration: input.calibration ?? null,
    skippedTurns: input.skippedTurns ?? 0,
    load: {
      ...input.load,
      scheduleLagP99Ms: input.clientLagsMs.length > 0 ? summarize([...input.clientLagsMs]).p99 : null,
    },
    host: input.host ?? null,
    engineDecode: input.engineDecode ?? null,
    coalescedItl: input.coalescedItl,
    prompts: input.prompts,
    prefixCacheHitsDelta: input.prefixCacheHitsDelta ?? null,
    responseCache: input.responseCache,
    impossibleCached: impossibleUsage(ok, 'cached_tokens'),
    cutShort: input.cutShort ?? null,
    ttftSplit: input.ttftSplit ?? null,
    telemetry: input.telemetry ?? null,
    workers: input.workers ?? null,
    structuredAsk: input.structuredAsk ?? null,
  };
}

/** What the run-level checks judge: how the run's servers fared. */
export interface RunEvidence {
  /** The first server that died, with the fix for it; null when none did. */
  serverFailure: { message: string; fix: string } | null;
  simulated: boolean;
  /** Servers that became ready over the run. */
  serversStarted: number;
  /** Why the run failed, when it did (a server that never became ready names it). */
  failure: string | null;
}
