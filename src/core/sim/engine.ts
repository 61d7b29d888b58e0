import { answerPieces, simAnswer } from './structured-answer.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createRng } from '../rng.js';
import { FakeGpu, writeGpuState } from './fake-gpu.js';
import type { FaultSet } from './faults.js';
import { errorBody, sendJson } from './http.js';
import { PrefixCache, PREFIX_BLOCK } from './prefix-cache.js';
import type { SimProfile } from './profile.js';
import { Histogram, REQUEST_LATENCY_BUCKETS, type MetricsSnapshot } from './prometheus.js';
import type { ParsedRequest } from './request-parse.js';
import { Responder } from './responder.js';
import { Scheduler, type Seq } from './scheduler.js';
import type { SimClock, SimTimer } from './sim-clock.js';
import { OUTPUT_WORDS } from './tokenizer.js';
import { TruthLog, type TruthRecord } from './truth-log.js';
import type { WireFormat } from './wire-format.js';

/** What the engine holds right now, and what it has finished. */
export interface SimEngineCounts {
  running: number;
  waiting: number;
  finished: number;
}

/** How the engine runs: its model, profile, faults, clock, wire format and where it writes truth and GPU state. */
export interface SimEngineOptions {
  model: string;
  profile: SimProfile;
  seed: number;
  faults: FaultSet;
  clock: SimClock;
  wire: WireFormat;
  truthFile?: string;
  gpuStateFile?: string;
  /** How often the fake GPU advances and its state file is rewritten (ms). */
  gpuTickMs: number;
  log: (line: string) => void;
  /** crash-after fault: stops the HTTP server (cuts every connection) when the engine dies. */
  stopServer: () => void;
  /** crash-after fault: called once the engine has crashed. */
  onCrash?: () => void;
}

/**
 * The simulated engine behind the HTTP routes: the scheduler and its fake GPU, the prefix cache, the truth log,
 * the injected faults (error rates, stalls, crash-after) and the counts its metrics report.
 */
export class SimEngine {
  readonly model: string;
  readonly profile: SimProfile;
  readonly clock: SimClock;
  readonly faults: FaultSet;
  readonly prefixCache: PrefixCache | null;
  /** Unix seconds of start-up: the `created` of every response. */
  readonly created = Math.floor(Date.now() / 1000);
  /** Tokens generated per second over the last GPU tick (SGLang reports it). */
  genThroughput = 0;
  private readonly eosRng: () => number;
  private readonly faultRng: () => number;
  private readonly gpu: FakeGpu;
  private readonly scheduler: Scheduler;
  private readonly truthLog: TruthLog | null;
  private readonly ttft = new Histogram();
  private readonly decodeTime = new Histogram(REQUEST_LATENCY_BUCKETS);
  private readonly queueTime = new Histogram(REQUEST_LATENCY_BUCKETS);
  private readonly prefillTime = new Histogram(REQUEST_LATENCY_BUCKETS);
  private readonly startedMs: number;
  private requestCounter = 0;
  private finishedRequests = 0;
  private crashed = false;
  private closed = false;
  private lastGenTokens = 0;
  private lastTickMs: number;
  private gpuTimer: SimTimer | null = null;

  constructor(private readonly o: SimEngineOptions) {
    const { profile, seed, clock } = o;
    this.model = o.model;
    this.profile = profile;
    this.clock = clock;
    this.faults = o.faults;
    this.eosRng = createRng(seed ^ 0x9e3779b9);
    this.faultRng = createRng(seed ^ 0x5f3759df);
    this.gpu = new FakeGpu(profile, clock.nowMs());
    this.scheduler = new Scheduler(profile, createRng(seed ^ 0x2545f491), this.gpu, clock);
    this.prefixCache = profile.prefixCaching ? new PrefixCache(Math.floor(profile.kvCacheTokens / PREFIX_BLOCK)) : null;
    this.truthLog = o.truthFile ? new TruthLog(o.truthFile) : null;
    this.startedMs = clock.nowMs();
    this.lastTickMs = this.startedMs;
  }

  /** True once the slow-start fault's loading time has passed (/health answers 200). */
  get ready(): boolean {
    return this.clock.nowMs() - this.startedMs >= this.faults.slowStartMs;
  }

  /** The engine's queues and totals now. */
  counts(): SimEngineCounts {
    return {
      running: this.scheduler.running.length,
      waiting: this.scheduler.waiting.length,
      finished: this.scheduler.stats.finished,
    };
  }

  /** What /metrics reports, in either engine's naming. */
  snapshot(): MetricsSnapshot {
    return {
      model: this.model,
      running: this.scheduler.running.length,
      waiting: this.scheduler.waiting.length,
      kvUsage: this.scheduler.kvUsage,
      kvUsedTokens: this.scheduler.kvUsed,
      stats: this.scheduler.stats,
      ttft: this.ttft,
      decodeTime: this.decodeTime,
      queueTime: this.queueTime,
      prefillTime: this.prefillTime,
      genThroughput: this.genThroughput,
    };
  }

  /**
   * Empties the prefix cache (vLLM's /reset_prefix_cache, SGLang's /flush_cache); false, leaving it, when asked to
   * refuse while requests run or wait (SGLang's rule). True without a cache: there is nothing to keep.
   */
  flushPrefixCache(refuseWhenBusy: boolean): boolean {
    if (refuseWhenBusy && (this.scheduler.running.length > 0 || this.scheduler.waiting.length > 0)) return false;
    this.prefixCache?.clear();
    return true;
  }

  /** Starts the fake GPU's ticks (and its state file); call once the server listens. */
  startTicking(): void {
    this.gpuTimer = this.clock.setTimer(this.gpuTick, this.o.gpuTickMs, true);
    this.writeState();
  }

  private readonly gpuTick = (): void => {
    const now = this.clock.nowMs();
    this.gpu.tick(now);
    const gen = this.scheduler.stats.generationTokens;
    this.genThroughput = ((gen - this.lastGenTokens) * 1000) / Math.max(1, now - this.lastTickMs);
    this.lastGenTokens = gen;
    this.lastTickMs = now;
    this.writeState();
    // Unref'd, as the interval it replaces: the GPU ticker alone never keeps the process alive.
    this.gpuTimer = this.clock.setTimer(this.gpuTick, this.o.gpuTickMs, true);
  };

  private writeState(): void {
    const file = this.o.gpuStateFile;
    if (!file) return;
    try {
      writeGpuState(file, this.gpu.state());
    } catch (error) {
      this.o.log(`servebench sim: cannot write GPU state file ${file}: ${(error as Error).message}`);
    }
  }

  private stopTimers(): void {
    if (this.gpuTimer !== null) this.clock.clearTimer(this.gpuTimer);
    this.gpuTimer = null;
  }

  /** The crash-after fault: the engine dies, every connection is cut, the truth log is flushed. */
  private readonly crash = (): void => {
    if (this.crashed || this.closed) return;
    this.crashed = true;
    this.o.log(
      `(EngineCore_DP0 pid=${process.pid}) ERROR servebench sim: crash-after=${this.faults.crashAfter ?? 0} fault: the engine dies now`,
    );
    this.scheduler.stop();
    this.o.stopServer();
    this.stopTimers();
    this.truthLog?.flush();
    this.o.onCrash?.();
  };

  /** Stops the engine: no more steps or GPU ticks, the fake GPU released and its last state written. */
  stop(): void {
    this.closed = true;
    this.scheduler.stop();
    this.stopTimers();
    this.gpu.release();
    this.writeState();
  }

  /** True once the crash-after fault fired (the HTTP server is closed by then). */
  get hasCrashed(): boolean {
    return this.crashed;
  }

  /** One request's queue wait, prefill and TTFT, observed into the histograms as vLLM does and stamped in its truth. */
  private phaseObserver(receivedMs: number, truth: TruthRecord | null) {
    const clock = this.clock;
    let scheduledMs: number | null = null;
    let firstTokenMs: number | null = null;
    return {
      scheduled: () => {
        scheduledMs = clock.nowMs();
        if (truth) truth.scheduledNs = clock.nowNs().toString();
      },
      firstToken: (ms: number) => {
        this.ttft.observe(ms / 1000);
        firstTokenMs = receivedMs + ms;
      },
      // Queue and prefill times are observed for finished requests, as vLLM does.
      ended: () => {
        if (scheduledMs === null || firstTokenMs === null) return;
        this.queueTime.observe((scheduledMs - receivedMs) / 1000);
        this.prefillTime.observe((firstTokenMs - scheduledMs) / 1000);
      },
    };
  }

  /** Writes the truth log's pending lines. */
  flushTruth(): void {
    this.truthLog?.flush();
  }

  private countFinished(res: ServerResponse): void {
    res.once('finish', () => {
      this.finishedRequests++;
      if (this.faults.crashAfter !== null && this.finishedRequests >= this.faults.crashAfter) setImmediate(this.crash);
    });
  }

  /** How many tokens this answer runs to: max_tokens, or earlier by a geometric draw of EOS after min_tokens. */
  private outputTarget(parsed: ParsedRequest): number {
    const { eosProb } = this.profile;
    if (parsed.ignoreEos || eosProb <= 0) return parsed.maxTokens;
    const from = Math.max(parsed.minTokens, 1);
    const extra = eosProb >= 1 ? 0 : Math.floor(Math.log(1 - this.eosRng()) / Math.log(1 - eosProb));
    return Math.min(parsed.maxTokens, from + extra);
  }

  /**
   * Serves one pooling request (embeddings, rerank): the error-rate fault drawn, its prompt tokens prefilled with the
   * running batch (no decode step), then `answer` sent whole.
   */
  pool(res: ServerResponse, promptTokens: number, answer: () => unknown): void {
    this.requestCounter++;
    this.countFinished(res);
    if (this.faults.errorRate > 0 && this.faultRng() < this.faults.errorRate) {
      sendJson(res, 500, errorBody(500, 'simulated internal server error (error-rate fault)', 'InternalServerError'));
      return;
    }
    const seq: Seq = {
      promptTokens,
      cachedTokens: 0,
      target: 1,
      generated: 0,
      stallAt: -1,
      stallMs: 0,
      onTokens: (_count, done) => {
        if (done && !res.destroyed) sendJson(res, 200, answer());
      },
    };
    res.once('close', () => {
      if (!res.writableFinished) this.scheduler.cancel(seq);
    });
    this.scheduler.submit(seq);
  }

  /** Serves one generation request: faults drawn, early EOS drawn, prefix cache looked up, then scheduled. */
  generate(
    req: IncomingMessage,
    res: ServerResponse,
    parsed: ParsedRequest,
    receivedNs: bigint,
    receivedMs: number,
  ): void {
    const { profile, faults, clock } = this;
    const n = this.requestCounter++;
    const requestIdHeader = req.headers['x-request-id'];
    const requestId = typeof requestIdHeader === 'string' ? requestIdHeader : null;
    const truth: TruthRecord | null = this.truthLog
      ? {
          requestId,
          receivedNs: receivedNs.toString(),
          firstTokenNs: null,
          chunks: [],
          endNs: null,
          promptTokens: parsed.promptTokens,
          completionTokens: 0,
          finishReason: null,
        }
      : null;
    this.countFinished(res);
    if (faults.errorRate > 0 && this.faultRng() < faults.errorRate) {
      sendJson(res, 500, errorBody(500, 'simulated internal server error (error-rate fault)', 'InternalServerError'));
      if (truth) {
        truth.endNs = clock.nowNs().toString();
        truth.finishReason = 'http-500';
        this.truthLog?.write(truth);
      }
      return;
    }
    const answer = structuredPlan(parsed, n);
    const target = answer ? answer.target : this.outputTarget(parsed);
    const finishReason = answer ? answer.finishReason : target < parsed.maxTokens ? 'stop' : 'length';
    const half = Math.floor(target / 2);
    const midstream = parsed.stream && faults.midstreamErrorRate > 0 && this.faultRng() < faults.midstreamErrorRate;
    const malformed = parsed.stream && faults.malformedRate > 0 && this.faultRng() < faults.malformedRate;
    const cachedTokens = this.prefixCache && parsed.ids ? this.prefixCache.lookupAndInsert(parsed.ids) : 0;
    const id = responseId(parsed.api, n);
    let seq: Seq | null = null;
    const phases = this.phaseObserver(receivedMs, truth);
    const responder = new Responder(res, {
      api: parsed.api,
      stream: parsed.stream,
      model: parsed.adapter ?? this.model,
      id,
      created: this.created,
      promptTokens: parsed.promptTokens,
      cachedTokens,
      target,
      finishReason,
      includeUsage: parsed.includeUsage,
      continuousUsage: parsed.continuousUsage,
      wire: this.o.wire,
      reasoningTokens: parsed.api === 'chat' && !answer ? profile.reasoningTokens : 0,
      ...(answer && { answer: answer.answer }),
      wordOffset: (n * 7) % OUTPUT_WORDS.length,
      midstreamErrorAt: midstream ? half : -1,
      malformedAt: malformed ? half : -1,
      buffered: faults.buffered && parsed.stream,
      closeAfterStream: faults.closeAfterStream && parsed.stream,
      echoRequestId: requestId,
      truth,
      receivedMs,
      clock,
      onFirstToken: phases.firstToken,
      onDecoded: (ms) => this.decodeTime.observe(ms / 1000),
      onEnd: (record) => {
        phases.ended();
        if (record && seq) stampEnergy(record, seq);
        if (record) this.truthLog?.write(record);
      },
      abort: () => {
        if (seq) this.scheduler.cancel(seq);
      },
    });
    responder.start();
    seq = {
      promptTokens: parsed.promptTokens,
      cachedTokens,
      target,
      generated: 0,
      stallAt: faults.stallMs > 0 && target > 1 ? Math.max(1, half) : -1,
      stallMs: faults.stallMs,
      onTokens: (count, done, chunkTokens) => responder.onTokens(count, done, chunkTokens),
      ...(parsed.adapter !== undefined ? { adapter: parsed.adapter } : {}),
      onScheduled: phases.scheduled,
    };
    this.scheduler.submit(seq);
  }
}

/**
 * A constrained request's answer: its tokens (cut at max_tokens, so a short limit breaks the JSON as it would on an
 * engine) and why it ends; null for free text, or a constraint the simulator cannot meet (it then answers words).
 */
function structuredPlan(parsed: ParsedRequest, n: number) {
  if (!parsed.constraint || parsed.api === 'generate') return null;
  const a = simAnswer(parsed.constraint, n);
  if (!a) return null;
  const pieces = answerPieces(a.kind === 'tool' ? a.arguments : a.text);
  const whole = pieces.length <= parsed.maxTokens;
  const tool = a.kind === 'tool' && parsed.api === 'chat';
  return {
    target: Math.min(pieces.length, parsed.maxTokens),
    finishReason: !whole ? ('length' as const) : tool ? ('tool_calls' as const) : ('stop' as const),
    answer: {
      kind: tool ? ('tool' as const) : ('text' as const),
      pieces,
      ...(tool && { name: (a as { name: string }).name }),
    },
  };
}

/** The answer's id in each API's own style. */
function responseId(api: ParsedRequest['api'], n: number): string {
  const idHex = n.toString(16).padStart(16, '0');
  return api === 'chat' ? `chatcmpl-sim${idHex}` : api === 'completions' ? `cmpl-sim${idHex}` : `sim${idHex}`;
}

/** The request's energy from the fake GPU, rounded to micro-joules, in its truth record. */
function stampEnergy(record: TruthRecord, seq: Seq): void {
  const prefill = seq.prefillJ ?? 0;
  record.energyJ = Math.round((prefill + (seq.decodeJ ?? 0)) * 1e6) / 1e6;
  record.prefillEnergyJ = Math.round(prefill * 1e6) / 1e6;
}
