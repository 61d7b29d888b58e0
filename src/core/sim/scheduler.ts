import type { FakeGpu } from './fake-gpu.js';
import { denoiseSteps, type SimProfile } from './profile.js';
import type { Rng } from '../rng.js';
import { realSimClock, type SimClock, type SimTimer } from './sim-clock.js';

/** One request as the engine sees it. The scheduler calls onTokens as its tokens are produced. */
export interface Seq {
  promptTokens: number;
  /** Prompt tokens found in the prefix cache: they skip prefill. */
  cachedTokens: number;
  /** Tokens this request will generate (max_tokens, or fewer after a sampled early EOS). */
  target: number;
  generated: number;
  /** Generated count at which the stream pauses (stall fault); -1 = never. */
  stallAt: number;
  stallMs: number;
  /** Called with the tokens of one step (or all of them in zero-delay mode), in chunks of chunkTokens. */
  onTokens(count: number, done: boolean, chunkTokens: number): void;
  /** Energy truth: GPU energy above idle spent on this request's prompt, and its share of the decode steps (J). */
  prefillJ?: number;
  decodeJ?: number;
  /** The LoRA adapter it runs with: each distinct adapter in a step costs the profile's loraStepMs. */
  adapter?: string;
  /** Told once, when the sequence is first admitted to the batch (its queue wait ends and its prefill starts). */
  onScheduled?(): void;
  /** Set by cancel(); the scheduler drops the sequence. */
  cancelled?: boolean;
  /** Internal bookkeeping. */
  stalledUntil?: number;
  pendingPrefill?: number;
  queued?: boolean;
  scheduled?: boolean;
}

/** Engine counters exposed on /metrics. */
export interface EngineStats {
  preemptions: number;
  promptTokens: number;
  generationTokens: number;
  prefixHitTokens: number;
  prefixQueryTokens: number;
  finished: number;
}

/** If the loop falls this far behind its schedule (a blocked event loop), it stops trying to catch up. */
export const MAX_LAG_MS = 200;

/**
 * Continuous batching with a step-time model, driven by one timer for the whole engine (never a
 * timer per request). Each step admits waiting requests while max-num-seqs and KV capacity allow,
 * charges prefill for their uncached prompt tokens, and emits one token (or one diffusion block)
 * for every running sequence when it ends. Steps are scheduled on absolute due times so timer
 * slop does not accumulate into the simulated throughput.
 */
export class Scheduler {
  readonly running: Seq[] = [];
  readonly waiting: Seq[] = [];
  readonly stats: EngineStats = {
    preemptions: 0,
    promptTokens: 0,
    generationTokens: 0,
    prefixHitTokens: 0,
    prefixQueryTokens: 0,
    finished: 0,
  };
  kvUsed = 0;
  private inStep: Seq[] = [];
  /** Requests admitted by the step being planned, with the prompt tokens they prefill in it. */
  private admitted: Array<[Seq, number]> = [];
  private timer: SimTimer | null = null;
  private nextDueMs = 0;
  private stopped = false;
  private readonly tokensPerStep: number;
  private readonly stepsPerBlock: number;

  constructor(
    private readonly p: SimProfile,
    private readonly rng: Rng,
    private readonly gpu: FakeGpu | null,
    private readonly clock: SimClock = realSimClock,
  ) {
    this.tokensPerStep = p.blockSize > 0 ? p.blockSize : 1;
    this.stepsPerBlock = p.blockSize > 0 ? denoiseSteps(p.blockSize, p.threshold, p.denoiseExponent) : 1;
  }

  /** Share of the KV cache in use (0..1). */
  get kvUsage(): number {
    return this.kvUsed / this.p.kvCacheTokens;
  }

  /** Denoising steps per diffusion block at the profile's threshold (1 when autoregressive). */
  get denoiseStepsPerBlock(): number {
    return this.stepsPerBlock;
  }

  /** Queues a request; in zero-delay mode it is answered at once. */
  submit(seq: Seq): void {
    if (this.stopped) return;
    this.stats.promptTokens += seq.promptTokens;
    this.stats.prefixQueryTokens += seq.promptTokens;
    this.stats.prefixHitTokens += seq.cachedTokens;
    if (this.p.instant) {
      this.runInstant(seq);
      return;
    }
    seq.pendingPrefill = seq.promptTokens - seq.cachedTokens;
    seq.queued = true;
    this.waiting.push(seq);
    if (this.timer === null) {
      this.nextDueMs = this.clock.nowMs();
      this.planStep();
    }
  }

  /** Drops a request (client went away, or a fault ended it); frees its KV cache. */
  cancel(seq: Seq): void {
    if (seq.cancelled) return;
    seq.cancelled = true;
    const w = this.waiting.indexOf(seq);
    if (w >= 0) this.waiting.splice(w, 1);
    const r = this.running.indexOf(seq);
    if (r >= 0) {
      this.running.splice(r, 1);
      this.kvUsed -= seq.promptTokens + seq.generated;
    }
  }

  /** Stops the loop; nothing is emitted afterwards. */
  stop(): void {
    this.stopped = true;
    if (this.timer !== null) this.clock.clearTimer(this.timer);
    this.timer = null;
  }

  private runInstant(seq: Seq): void {
    const chunk = this.tokensPerStep;
    const finish = (): void => {
      this.stats.generationTokens += seq.target;
      this.stats.finished++;
    };
    if (seq.stallAt > 0 && seq.stallAt < seq.target) {
      seq.generated = seq.stallAt;
      seq.onTokens(seq.stallAt, false, chunk);
      this.clock.setTimer(() => {
        if (seq.cancelled || this.stopped) return;
        seq.generated = seq.target;
        finish();
        seq.onTokens(seq.target - seq.stallAt, true, chunk);
      }, seq.stallMs);
      return;
    }
    seq.generated = seq.target;
    finish();
    seq.onTokens(seq.target, true, chunk);
  }

  private admit(): number {
    const p = this.p;
    let prefill = 0;
    while (this.waiting.length > 0 && this.running.length < p.maxNumSeqs) {
      const seq = this.waiting[0]!;
      const need = seq.promptTokens + seq.generated + this.tokensPerStep;
      // First come, first served, as vLLM does: a request that does not fit blocks those behind it.
      if (this.kvUsed + need > p.kvCacheTokens && this.running.length > 0) break;
      this.waiting.shift();
      seq.queued = false;
      if (!seq.scheduled) {
        seq.scheduled = true;
        seq.onScheduled?.();
      }
      this.running.push(seq);
      this.kvUsed += seq.promptTokens + seq.generated;
      prefill += seq.pendingPrefill ?? 0;
      this.admitted.push([seq, seq.pendingPrefill ?? 0]);
      seq.pendingPrefill = 0;
    }
    return prefill;
  }

  /** Evicts the newest sequences until this step's new tokens fit (recompute preemption). */
  private preemptIfFull(active: Seq[]): Seq[] {
    let need = active.length * this.tokensPerStep;
    while (this.kvUsed + need > this.p.kvCacheTokens && this.running.length > 1) {
      const victim = this.running.pop()!;
      this.kvUsed -= victim.promptTokens + victim.generated;
      victim.pendingPrefill = victim.promptTokens + victim.generated;
      victim.queued = true;
      this.waiting.unshift(victim);
      this.stats.preemptions++;
      const i = active.indexOf(victim);
      if (i >= 0) {
        active.splice(i, 1);
        need -= this.tokensPerStep;
      }
    }
    return active;
  }

  private planStep(): void {
    this.timer = null;
    if (this.stopped) return;
    const now = this.clock.nowMs();
    this.admitted = [];
    const prefillTokens = this.admit();
    let active = this.running.filter((s) => !s.stalledUntil || s.stalledUntil <= now);
    if (active.length === 0) {
      if (this.running.length === 0) return; // idle until the next submit
      // Every running sequence is stalled: sleep until the first one resumes.
      const wake = Math.min(...this.running.map((s) => s.stalledUntil ?? now));
      this.nextDueMs = wake;
      this.timer = this.clock.setTimer(() => this.planStep(), Math.max(0, wake - now));
      return;
    }
    active = this.preemptIfFull(active);
    const p = this.p;
    // Punica/S-LoRA batching: one extra LoRA matmul per distinct adapter in the batch, each step.
    const adapters = new Set(active.map((s) => s.adapter).filter((a) => a !== undefined)).size;
    const decodeMs = this.stepsPerBlock * (p.stepBaseMs + p.stepPerSeqMs * active.length + p.loraStepMs * adapters);
    const prefillMs = (prefillTokens / p.prefillTokPerS) * 1000;
    const jitter = 1 + p.jitter * (2 * this.rng() - 1);
    const clock = this.gpu ? this.gpu.clockRatio : 1;
    const durMs = ((decodeMs + prefillMs) * jitter) / clock;
    this.chargeEnergy(active, prefillTokens, (prefillMs * jitter) / clock, (decodeMs * jitter) / clock);
    this.inStep = active;
    if (this.nextDueMs < now - MAX_LAG_MS) this.nextDueMs = now;
    this.gpu?.addBusy(durMs, this.nextDueMs);
    this.nextDueMs += durMs;
    this.timer = this.clock.setTimer(() => this.endStep(), Math.max(0, this.nextDueMs - now));
  }

  /**
   * Energy truth of one step: the GPU's power above idle over the step, the prefill part shared by the admitted
   * requests' prompt tokens, the decode part equally by the running ones (each makes one token or block).
   */
  private chargeEnergy(active: readonly Seq[], prefillTokens: number, prefillMs: number, decodeMs: number): void {
    const watts = this.gpu ? this.gpu.loadPowerW() : 0;
    if (prefillTokens > 0) {
      for (const [seq, tokens] of this.admitted) {
        seq.prefillJ = (seq.prefillJ ?? 0) + (watts * prefillMs * tokens) / prefillTokens / 1000;
      }
    }
    for (const seq of active) seq.decodeJ = (seq.decodeJ ?? 0) + (watts * decodeMs) / active.length / 1000;
  }

  private endStep(): void {
    const step = this.inStep;
    this.inStep = [];
    const now = this.clock.nowMs();
    for (const seq of step) {
      if (seq.cancelled || seq.queued) continue;
      const n = Math.min(this.tokensPerStep, seq.target - seq.generated);
      seq.generated += n;
      this.kvUsed += n;
      this.stats.generationTokens += n;
      const done = seq.generated >= seq.target;
      if (done) {
        this.running.splice(this.running.indexOf(seq), 1);
        this.kvUsed -= seq.promptTokens + seq.generated;
        this.stats.finished++;
      } else if (seq.stallAt >= 0 && seq.generated >= seq.stallAt) {
        seq.stalledUntil = now + seq.stallMs;
        seq.stallAt = -1;
      }
      seq.onTokens(n, done, n);
    }
    this.planStep();
  }
}
