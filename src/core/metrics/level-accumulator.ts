import type { RequestRecord } from '../../shared/request-record.js';
import type { Summary } from '../../shared/run-record.js';
import { createRng, type Rng } from '../rng.js';
import { isCoalescedGap, serverItlMs, type CoalescedItl } from './coalesced-itl.js';
import { isMeasured, outputCounted, requestMetrics } from './request-metrics.js';
import { RecordStore } from './record-store.js';
import { CountColumn, EXACT_VALUES_MAX, SampleColumn, type Column } from './sample-column.js';

/** Chunks of whole records a level keeps for the checks that read stream shapes (about 12 MB of [time, tokens] pairs). */
const STREAM_CHUNKS_MAX = 250_000;

/** Whole records a level keeps at most, however short their streams. */
const STREAM_RECORDS_MAX = 5_000;

/** How much of a level the accumulator keeps whole; tests shrink them. */
export interface AccumulatorLimits {
  streamChunks: number;
  streamRecords: number;
  exactValues: number;
}

const DEFAULT_LIMITS: AccumulatorLimits = {
  streamChunks: STREAM_CHUNKS_MAX,
  streamRecords: STREAM_RECORDS_MAX,
  exactValues: EXACT_VALUES_MAX,
};

/** The pooled latency columns of a level's ok measured requests (poolLatencies, held as columns). */
export interface PooledColumns {
  ttftMs: Column;
  e2eMs: Column;
  tpotMs: Column;
  itlMs: Column;
  itlPerTokenMs: Column;
  tokensPerChunk: Column;
  ttfoMs: Column;
  reasoningTokens: Column;
  contentTokens: Column;
  serverItlMs: Column;
}

/** How a level's whole records were kept: all of them, or a uniform sample once they outgrew the bound. */
export interface StreamSample {
  kept: number;
  of: number;
}

/**
 * A record without its chunk list: its first and last token-bearing chunk only, the tokens between folded into the
 * last, so its TTFT, end bound, TPOT and token total stay what they were (the chunk gaps are in the columns).
 */
export function condensed(record: RequestRecord): RequestRecord {
  const c = record.chunks;
  if (c.length <= 2) return record;
  const rest = c.reduce((a, x) => a + x[1], 0) - c[0]![1];
  return { ...record, chunks: [c[0]!, [c[c.length - 1]![0], rest]] };
}

/**
 * A level's requests summarised as they finish: exact latency columns (sketched past `exactValues`), every record
 * condensed once the whole ones outgrow the bound, and a seeded uniform sample of whole records for the checks that
 * read each stream's chunks. Nothing else of a request is kept.
 */
export class LevelAccumulator {
  readonly warmup: RequestRecord[] = [];
  readonly measured: RequestRecord[] = [];
  readonly pooled: PooledColumns;
  /** Reasoning counts that came from the server's reasoning_tokens. */
  reasoningFromServer = 0;
  private gaps = 0;
  private coalescedGaps = 0;
  private keptChunks = 0;
  private seen = 0;
  private sample: RequestRecord[] | null = null;
  // Condensed records as columns once the whole ones outgrew the bound (the lists hold views of its rows).
  private readonly store = new RecordStore();
  private readonly rng: Rng;
  private readonly limits: AccumulatorLimits;

  constructor(seed = 0, limits: Partial<AccumulatorLimits> = {}) {
    this.limits = { ...DEFAULT_LIMITS, ...limits };
    this.rng = createRng(seed);
    const column = (): SampleColumn => new SampleColumn(this.limits.exactValues);
    this.pooled = {
      ttftMs: column(),
      e2eMs: column(),
      tpotMs: column(),
      itlMs: column(),
      itlPerTokenMs: column(),
      tokensPerChunk: new CountColumn(),
      ttfoMs: column(),
      reasoningTokens: new CountColumn(),
      contentTokens: new CountColumn(),
      serverItlMs: column(),
    };
  }

  /** An accumulator of these records, in order. */
  static of(records: readonly RequestRecord[], seed = 0, limits: Partial<AccumulatorLimits> = {}): LevelAccumulator {
    const acc = new LevelAccumulator(seed, limits);
    for (const r of records) acc.add(r);
    return acc;
  }

  /** Takes one finished request: its latencies into the columns, the record kept whole or condensed. */
  add(record: RequestRecord): void {
    if (record.ok && isMeasured(record)) this.pool(record);
    this.keep(record);
  }

  private pool(record: RequestRecord): void {
    const p = this.pooled;
    const m = requestMetrics(record);
    if (m.ttftMs !== null) p.ttftMs.add(m.ttftMs);
    if (m.e2eMs !== null) p.e2eMs.add(m.e2eMs);
    if (m.tpotMs !== null) p.tpotMs.add(m.tpotMs);
    for (const v of m.itlMs) p.itlMs.add(v);
    for (const v of m.itlPerTokenMs) p.itlPerTokenMs.add(v);
    for (const v of m.tokensPerChunk) p.tokensPerChunk.add(v);
    if (m.ttfoMs !== null) p.ttfoMs.add(m.ttfoMs);
    if (record.nReasoning !== undefined && outputCounted(record)) {
      p.reasoningTokens.add(record.nReasoning);
      p.contentTokens.add(record.nContent ?? record.nOut - record.nReasoning);
      if (record.nReasoningSource === 'server') this.reasoningFromServer++;
    }
    const c = record.chunks;
    for (let i = 1; i < c.length; i++) {
      this.gaps++;
      if (isCoalescedGap(c[i]![0] - c[i - 1]![0], c[i]![1])) this.coalescedGaps++;
    }
    const s = serverItlMs(record);
    if (s !== null) p.serverItlMs.add(s);
  }

  private keep(record: RequestRecord): void {
    const list = isMeasured(record) ? this.measured : this.warmup;
    this.seen++;
    if (this.sample === null) {
      list.push(record);
      this.keptChunks += record.chunks.length;
      const tooMany =
        this.keptChunks > this.limits.streamChunks ||
        this.warmup.length + this.measured.length > this.limits.streamRecords;
      if (tooMany) this.overflow();
      return;
    }
    list.push(this.store.push(condensed(record)));
    // Algorithm R: each record seen so far is in the sample with the same chance.
    const j = Math.floor(this.rng() * this.seen);
    if (j < this.sample.length) this.sample[j] = record;
  }

  /** The whole records outgrew the bound: they become the sample, and every kept record is condensed. */
  private overflow(): void {
    this.sample = [...this.warmup, ...this.measured];
    for (const list of [this.warmup, this.measured]) list.forEach((r, i) => (list[i] = this.store.push(condensed(r))));
  }

  /** Whole records, warm-up included, in id order: every record, or the uniform sample once the bound was passed. */
  get streamRecords(): RequestRecord[] {
    if (this.sample === null) return [...this.warmup, ...this.measured];
    return [...this.sample].sort((a, b) => a.id - b.id);
  }

  /** The sample the stream checks judged, when they judged one rather than every record. */
  get streamSample(): StreamSample | null {
    return this.sample === null ? null : { kept: this.sample.length, of: this.seen };
  }

  /** True once any latency column holds a sketch instead of its values. */
  get sketched(): boolean {
    return Object.values(this.pooled).some((c: Column) => c.sketched);
  }

  /** The coalesced share of the ok measured chunk gaps (coalescedItl), and the server's time per token. */
  coalescedItl(): { coalesced: CoalescedItl; serverItlMs: Summary | null } {
    const coalesced: CoalescedItl = {
      gaps: this.gaps,
      coalesced: this.coalescedGaps,
      share: this.gaps > 0 ? this.coalescedGaps / this.gaps : null,
      serverItlMs: [],
    };
    return { coalesced, serverItlMs: this.pooled.serverItlMs.n > 0 ? this.pooled.serverItlMs.summary() : null };
  }
}

/** The accumulator of level `levelIndex` of a run seeded `seed`: a level run live and merged later sample alike. */
export function levelAccumulator(seed: number, levelIndex: number): LevelAccumulator {
  return new LevelAccumulator(seed * 31 + levelIndex);
}
