import type { EndpointKind } from './endpoint-kinds.js';
import type { CapacityResult } from './capacity.js';
import type { BenchConfig } from './config.js';
import type { CheckId } from './check-catalog.js';
import type { DistributedRecord, WorkerLevelView } from './distributed.js';

/** The run record: one per run, written as run.json. Field names are a contract (see issue 2); add, never rename. */

export type CheckStatus = 'pass' | 'warn' | 'fail';

/** Check ids: declared in check-catalog.ts, in report order. */
export type { CheckId } from './check-catalog.js';

/** A figure a check's verdict rests on, machine-readable (tests and tools read these, never the prose). */
export type CheckFact = number | string | boolean | null;

/** The host's CPU pressure over a level: shares of its window, null where the host does not say (no Linux PSI). */
export interface HostPressure {
  windowMs: number;
  /** Some runnable task waited for a CPU (PSI /proc/pressure/cpu "some"). */
  cpuSomeShare: number | null;
  /** This process's main thread waited on a run queue, runnable but not running (/proc/self/schedstat). */
  selfWaitShare: number | null;
}

export interface Check {
  id: CheckId;
  status: CheckStatus;
  /** The prose, for people: rendered from the code and facts. */
  detail: string;
  /** Why this status, as a stable kebab-case code (e.g. 'offered-below-asked', 'buffered-burst'); absent in old runs. */
  code?: string;
  /** The figures behind the verdict, by name (e.g. { achievedConcurrency: 9.1, askedConcurrency: 64 }). */
  facts?: Record<string, CheckFact>;
}

/** A confidence interval [lo, hi], or null when too few samples to form one. */
export type Ci = [number, number] | null;

export interface Summary {
  n: number;
  mean: number | null;
  std: number | null;
  min: number | null;
  max: number | null;
  p50: number | null;
  p90: number | null;
  p95: number | null;
  p99: number | null;
  p95Ci: Ci;
  p99Ci: Ci;
  /** The 99.9th percentile and its interval (absent in runs recorded before it was summarised). */
  p999?: number | null;
  p999Ci?: Ci;
}

export interface RoundResult {
  round: number;
  outputTokPerSec: number;
  totalTokPerSec: number;
  reqPerSec: number;
  windowMs: number;
  completed: number;
  failed: number;
  startMs: number;
  endMs: number;
  /** True when the round was cut short (cancel, server died): kept for the record, left out of the level's means and spread. */
  partial?: boolean;
}

export type ThrottleClass = 'idle' | 'full-speed' | 'power-cap' | 'thermal' | 'hw-slowdown' | 'unknown';

export interface LevelTelemetry {
  source: 'nvidia-smi' | 'dcgm' | 'unavailable';
  /** Why telemetry is missing, when source is unavailable. */
  reason?: string;
  samples: number;
  smClockMeanMhz: number | null;
  smClockMinMhz: number | null;
  clockRatioMean: number | null;
  clockRatioMin: number | null;
  tempMaxC: number | null;
  powerMeanW: number | null;
  energyJ: number | null;
  jPerOutputTok: number | null;
  throttle: {
    thermalFraction: number | null;
    hwSlowdownFraction: number | null;
    powerCapFraction: number | null;
    idleFraction: number | null;
    unknownFraction: number | null;
  };
  kvUsagePeak: number | null;
  waitingPeak: number | null;
  runningPeak: number | null;
  preemptions: number | null;
  prefixCacheHits: number | null;
  /** Prompt tokens looked up in the prefix cache over the level, and hits / that (where the engine gives both). */
  prefixCacheQueries?: number | null;
  prefixCacheHitRate?: number | null;
  /**
   * The engine's own mean decode time per request (first to last token, ms) over the requests it finished between
   * two scrapes inside the level, and how many; only where the engine reports it (vLLM).
   */
  engineDecodeMeanMs?: number | null;
  engineDecodeRequests?: number | null;
  /** The engine's own TTFT parts over the level (its queue, prefill and TTFT histograms), where it reports any. */
  engineTtftParts?: EngineTtftParts;
  /** Other processes that held GPU memory during the level (names/pids), when known. */
  otherGpuProcesses?: string[];
  /** What a telemetry source sent that was left out: impossible values in this window, a source dropped by then. */
  issues?: TelemetryIssue[];
}

/**
 * Means of the engine's per-request histograms (ms) over the requests they counted between the first and the last
 * scrape inside a level (fromMs, toMs on the run clock); null for a histogram the engine does not export.
 */
export interface EngineTtftParts {
  fromMs: number;
  toMs: number;
  requests: number;
  queueMeanMs: number | null;
  prefillMeanMs: number | null;
  ttftMeanMs: number | null;
}

/**
 * A level's precision at its last look: rounds run of those planned, each look's confidence (Bonferroni over the
 * planned looks), each figure's estimate, interval and half-width as a share of it against its target, the round
 * spread, and whether all reached it (a level that did not ran every planned round).
 */
export interface LevelPrecision {
  rounds: number;
  plannedRounds: number;
  confidence: number;
  figures: Array<{
    figure: string;
    target: number;
    value: number | null;
    ci: [number, number] | null;
    halfWidth: number | null;
    reached: boolean;
  }>;
  roundCv: number | null;
  reached: boolean;
}

/** A part of TTFT: what it is, its ms (null: the source gave none, so it lies within the rest) and where it came from. */
export interface TtftPart {
  part: 'queue' | 'prefill' | 'server-other' | 'connect' | 'rest';
  ms: number | null;
  /**
   * 'engine-metrics' (the engine's /metrics histograms), 'engine-ttft-less-queue' (its TTFT histogram less its queue
   * one), 'server-timings' (llama.cpp's per-request timings), 'client' (the client's stamps), 'rest' (TTFT less the
   * known parts: network, HTTP stack, client, and any unknown part), 'unknown'.
   */
  source: 'engine-metrics' | 'engine-ttft-less-queue' | 'server-timings' | 'client' | 'rest' | 'unknown';
}

/**
 * Where a level's TTFT goes: its TTFT on a basis ('mean' over the requests an engine's histograms counted, or 'p50'
 * with the parts averaged over the requests from p40 to p60), the parts summing to it, the parts unknown, and the
 * rest's share of TTFT; the engine's decode time per token beside TPOT where it reports one.
 */
export interface TtftSplit {
  basis: 'mean' | 'p50';
  ttftMs: number;
  requests: number;
  parts: TtftPart[];
  unknown: Array<TtftPart['part']>;
  restShare: number | null;
  decode?: { msPerToken: number; source: 'engine-metrics' | 'server-timings' } | null;
}

/** Something a telemetry source sent that servebench left out rather than build a figure or verdict on. */
export interface TelemetryIssue {
  source: 'gpu' | 'engine';
  /**
   * 'impossible-value' (a field out of its physical range, `count` samples of the window, e.g. `example`), or why the
   * source was dropped: 'oversized' (page or output too big), 'line-too-long', 'timed-out', 'flooding', 'hung'.
   */
  code: string;
  /** The field, for impossible values (e.g. 'tempC'). */
  field?: string;
  count?: number;
  example?: string;
  /** One line for people, rendered from the above. */
  detail: string;
}

/**
 * GPU energy of one level shared out to its requests (docs/telemetry.md): power samples integrated between
 * sample times, less the idle baseline, each interval split between the requests active in it by the tokens they
 * processed there (prompt tokens weighted by the fitted prefill cost; by time active where no fit holds). Joules;
 * all GPUs together.
 */
export interface LevelEnergy {
  /** Idle power subtracted (W, all GPUs), and where it came from; null when none could be measured (gross energy). */
  idleW: number | null;
  idleSource: 'before-run' | 'idle-samples' | 'none';
  /** Median spacing of the power samples (ms): the attribution cannot place energy finer than this. */
  sampleIntervalMs: number | null;
  /** Energy over the level's requests' span: as measured, and less idle. */
  measuredJ: number;
  netJ: number;
  /** Net energy given to requests (warm-up included), and what fell in intervals with no request active. */
  attributedJ: number;
  unattributedJ: number;
  /** 'fitted': tokens weighted by prompt and output token costs fitted to the samples; 'time': by time active instead. */
  weights: 'fitted' | 'time';
  /** Net joules per prompt token and per output token, when fitted. */
  prefillJPerToken?: number;
  decodeJPerToken?: number;
  /** Measured ok requests: joules per request, per output token, and the prefill and decode parts. */
  perRequestJ: Summary;
  jPerOutputTok: number | null;
  prefillJ: number;
  decodeJ: number;
  /** Per measured ok request: [id, total J, prefill J, decode J]; only in older run.json (bounded now: recomputed from the folder's files). */
  requests?: Array<[number, number, number, number]>;
}

/** Server-side parameters that define one configuration of a server sweep (e.g. threshold 0.9). */
export type ServerVariant = Record<string, string | number | boolean>;

/** Multi-turn levels: one turn index (0-based) across the conversations, its ok measured requests only. */
export interface TurnResult {
  turn: number;
  /** Mean prompt tokens at this turn (the server's count, else the expected): the history grows turn by turn. */
  inputTokens: number | null;
  ttftMs: Summary;
}

/** One group of a level's measured requests (a LoRA adapter, a replica): its counts, latencies and share of throughput. */
export interface GroupResult {
  /** The adapter's name, or the replica's index in --url (as text). */
  key: string;
  requests: number;
  completed: number;
  failed: number;
  ttftMs: Summary;
  tpotMs: Summary;
  e2eMs: Summary;
  /** Its output tokens in the level's complete rounds over their summed windows; null without a complete round. */
  outputTokPerSec: number | null;
}

/** The cache reset before a level: done, not possible with this engine (and the way round), or failed (its answer). */
export interface CacheResetResult {
  status: 'done' | 'not-possible' | 'failed';
  detail?: string;
}

/** Cached prompt tokens reported in the server's own responses (usage.prompt_tokens_details, llama.cpp timings). */
export interface ResponseCache {
  /** Ok measured requests whose response reported a count, of `of`. */
  requests: number;
  of: number;
  /** Their cached prompt tokens together (a lower bound when requests < of). */
  cachedTokens: number;
  /** The opening every unique prompt shares (chat template, first words), in tokens: cached in real traffic too. */
  openingTokens: number;
  /** True when the server counted that opening (/tokenize); false: the level's lower quartile of cached tokens. */
  openingCounted: boolean;
  /** Requests with at least half of their prompt past that opening from the cache: a reused prompt. */
  mostlyCachedRequests: number;
  /** cachedTokens over their prompt tokens; null unless every ok measured request reported a count. */
  hitRate: number | null;
}

/** The load the client really offered, from the records' own send and end stamps (docs/offered-load.md). */
export interface OfferedLoad {
  /**
   * Closed loop: requests in flight, time-averaged over each round's judged window (first send to the later of the
   * last send and the moment fewer than C requests were left unanswered: the drain after it is not the client's).
   */
  inFlightMean?: number;
  /** Closed loop: the largest count in flight during more than 95 % of those windows (time-weighted p5). */
  inFlightP5?: number;
  /** Closed loop: the windows' summed length, ms. */
  windowMs?: number;
  /** Share of the slot-time short of C that was spent refilling after failed requests (the server failed them fast). */
  shortfallAfterFailures?: number;
  /** Multi-turn closed loop: conversations in flight (first turn's send to last turn's end), what the check judges. */
  conversationsMean?: number;
  conversationsP5?: number;
  /** Open loop: requests sent per second over each round's sends (pooled), and the rate its drawn schedule asked. */
  ratePerSec?: number;
  scheduledRatePerSec?: number;
  /** Open loop with a --max-concurrency cap: measured sends the full cap held back at their scheduled time. */
  heldByCap?: number;
}

export interface LevelResult {
  /** Index of the server configuration (server sweeps); 0 otherwise. */
  serverConfigIndex: number;
  serverVariant?: ServerVariant;
  concurrency: number;
  /** Request rate (req/s) in open-loop mode; absent in closed loop and for a burst. */
  rate?: number;
  /** Trace replay whose arrivals span 0 ms: requests per round sent at once (it has no rate). */
  burst?: number;
  inputLen: number;
  outputLen: number;
  startMs: number;
  endMs: number;
  warmupRequests: number;
  rounds: RoundResult[];
  ttftMs: Summary;
  tpotMs: Summary;
  itlMs: Summary;
  /** ITL divided by tokens in the chunk (a diffusion model streams whole blocks). */
  itlPerTokenMs: Summary;
  e2eMs: Summary;
  /** Tokens per token-bearing chunk, pooled. */
  tokensPerChunk: Summary;
  /** Share of the chunk gaps (ITL samples) whose event arrived with the one before, in one read (see streaming). */
  itlCoalescedShare?: number;
  /** The server's own time per output token after the first, per request (llama.cpp timings), where it gives one. */
  serverItlMs?: Summary;
  /** Reasoning streams only: time to the first answer token (TTFO), beside ttftMs (first token of any kind). */
  ttfoMs?: Summary;
  /** Reasoning streams only: output tokens spent reasoning and on the answer, per request. */
  reasoningTokens?: Summary;
  contentTokens?: Summary;
  /** Whether those counts came from the server's reasoning_tokens or from counting chunks. */
  reasoningTokensSource?: 'server' | 'estimated' | 'mixed';
  /** Multi-turn levels only: TTFT per turn (n, p50/p95/p99 in each Summary), turn 0 first. */
  byTurn?: TurnResult[];
  /** --lora: the level per adapter, beside the whole. */
  byAdapter?: GroupResult[];
  /** Several --url replicas: the level per replica (key: its 0-based index in --url), beside the whole. */
  byReplica?: GroupResult[];
  /** --cache-reset: whether the server's prefix cache was emptied before this level, and why not when it was not. */
  cacheReset?: CacheResetResult;
  /** GPU energy attributed to this level's requests (docs/telemetry.md), when power was sampled. */
  energy?: LevelEnergy;
  /** The host's CPU pressure while the level ran (Linux PSI, this process's run-queue wait), where readable. */
  hostPressure?: HostPressure;
  scheduleLagMs?: Summary;
  /** The load really offered (in flight, or sent per second) beside the asked one; absent in runs before it. */
  offered?: OfferedLoad;
  /** Null when no round of the level completed (cut short): a partial round's rate is no throughput. */
  outputTokPerSec: number | null;
  totalTokPerSec: number | null;
  reqPerSec: number | null;
  roundCv: number | null;
  costPerMOutputTokUsd?: number;
  costPerMOutputTokAtUtilizationUsd?: number;
  /** Pooling endpoints only (embeddings, rerank): the kind, inputs per request, inputs/s, input tok/s and their cost. */
  endpoint?: EndpointKind;
  batchSize?: number;
  inputsPerSec?: number | null;
  inputTokPerSec?: number | null;
  costPerMInputTokUsd?: number;
  /** --response-format or --tools: the share of ok measured answers that were what was asked, and of how many. */
  structuredValidRate?: number;
  structuredAnswers?: number;
  costPerMInputTokAtUtilizationUsd?: number;
  goodput?: number;
  completed: number;
  /** Measured requests that failed on the server's side (user-cancelled requests are not counted here). */
  failed: number;
  /** Measured requests cancelled by the user (errorKind 'cancelled'): not failures, so not in failed or errorsByReason. */
  cancelled?: number;
  /** Multi-turn: turns not sent because an earlier turn of their conversation failed (no record; not in failed). */
  skippedTurns?: number;
  /** SSE lines of measured requests that were not valid JSON (tokens they carried went to the next chunk). */
  malformedLines?: number;
  /** How n_out was known: from the server's usage, or estimated by counting chunks. */
  outputTokensSource: 'server' | 'estimated' | 'mixed';
  errorsByReason: Record<string, number>;
  /** The commonest error message among the failed requests, quoted as the server (or the client) wrote it. */
  topError?: { kind: string; message: string; count: number };
  telemetry?: LevelTelemetry;
  /** With --precision: the figures' intervals where the level stopped, and whether they reached the precision. */
  precision?: LevelPrecision;
  /** Where the level's TTFT goes, from the best source it had (absent in records of earlier versions). */
  ttftSplit?: TtftSplit;
  /** Prefix-cache use as the server's responses reported it; absent when none did. */
  responseCache?: ResponseCache;
  /** True when the level was cut short (cancel, server died); its numbers cover what was measured. */
  partial?: boolean;
  /** Why the level was cut short (e.g. "the server died: ..."), set with partial. */
  cutShort?: string;
  /** Distributed runs: each worker's share of the level, its clock offset and its own client check. */
  workers?: WorkerLevelView[];
  checks: Check[];
}

/**
 * 'interrupted' is never written: a reader shows a 'running' run so when the process writing it is gone
 * (killed, crashed), decided from `writer`.
 */
export type RunStatus = 'running' | 'completed' | 'failed' | 'cancelled' | 'interrupted';

/** The process that writes a run folder: pid alone can be reused, so its start is recorded too. */
export interface RunWriterIdentity {
  pid: number;
  hostname: string;
  /** Opaque key of the process's start (Linux: boot id and start time); absent where unknown. */
  processStart?: string;
  /**
   * HMAC of the run id and what the run executes (its command, binaries, env, arguments, workload files) under
   * the writing user's own key: `run --from` runs a folder's commands unasked only where it checks.
   */
  seal?: string;
}

export interface RunEnvironment {
  host: { hostname: string; os: string; cpu?: string; cpus: number; memoryGiB?: number; node: string };
  servebenchVersion: string;
  engine: {
    kind: string;
    version?: string;
    model?: string;
    url?: string;
    /** Several --url replicas: each one's base URL, in --url order (passwords blanked). */
    replicas?: string[];
    simulated: boolean;
    command?: string;
  };
  /** Static facts of the GPUs as nvidia-smi reported them (null = not reported). */
  gpus?: Array<{
    index: number;
    name: string | null;
    memoryMiB: number | null;
    driver: string | null;
    cudaVersion: string | null;
    powerLimitW: number | null;
    maxSmClockMhz: number | null;
  }>;
}

/** The run folder a run re-ran (`servebench run --from`): its id, and its path on the machine that re-ran it. */
export interface RunOrigin {
  id: string;
  path: string;
}

/** The most distinct messages a run keeps: a server that warns on every request must not bloat run.json. */
export const MAX_RUN_MESSAGES = 500;

/** A message the run said (a warning, a note): kept so a report or a later look at the run still has it. */
export interface RunMessage {
  /** When it was first said, ms after the run's clock origin. */
  atMs: number;
  severity: 'info' | 'warn' | 'error';
  text: string;
  /** How many times the same severity and text were said (absent: once). */
  count?: number;
  /** The server configuration it belongs to, in a run with several (`serverVariants`). */
  serverConfigIndex?: number;
  /** The level it was said during, as an index into `levels` (absent when not during a kept level). */
  levelIndex?: number;
}

export interface RunRecord {
  schemaVersion: 1;
  id: string;
  label: string;
  startedAt: string;
  finishedAt: string | null;
  status: RunStatus;
  /** Reason for a failed, cancelled or interrupted run. */
  error?: string;
  /** The process writing this folder while it runs (stamped by the run writer). */
  writer?: RunWriterIdentity;
  /** True when the numbers come from the built-in simulator, not a real engine. */
  simulated: boolean;
  /** Set when the run re-ran another run's recorded configuration (`servebench run --from`). */
  fromRun?: RunOrigin;
  config: BenchConfig;
  environment: RunEnvironment;
  /** Monotonic clock origin: all *Ms times in this run are ms after this. */
  clock: { originMonoNs: string; originWall: string };
  levels: LevelResult[];
  checks: Check[];
  /** `--find-capacity` with one search: the highest load meeting every SLO, its bracket, each probe's verdicts and the knee. */
  capacity?: CapacityResult;
  /** `--find-capacity` with several searches (one per server configuration and input/output length), in run order. */
  capacities?: CapacityResult[];
  /** Messages said during the run (warnings, notes), in order; identical ones counted, not repeated. */
  messages?: RunMessage[];
  /** Messages left out of `messages` once it held its limit. */
  messagesLeftOut?: number;
  /** A run driven from several load generators: rank 0's merged run, or one worker's shard of it. */
  distributed?: DistributedRecord;
}
