import { appendFileSync, writeFileSync } from 'node:fs';

/** One line of the truth log: the server's own timestamps, on process.hrtime.bigint()'s clock, as decimal ns strings. */
export interface TruthRecord {
  requestId: string | null;
  receivedNs: string;
  /** When the engine first admitted it to the batch: its queue wait ended and its prefill began (absent: never). */
  scheduledNs?: string;
  /** Write time of the first chunk that carries generated tokens (null if none was written). */
  firstTokenNs: string | null;
  /** Every token-bearing chunk: [write time ns, tokens in it]. */
  chunks: Array<[string, number]>;
  endNs: string | null;
  promptTokens: number;
  completionTokens: number;
  /** length | stop | error | abort | http-500 */
  finishReason: string | null;
  /** Reasoning mode: write time of the first chunk carrying answer tokens (null if none), and the reasoning tokens. */
  firstContentNs?: string | null;
  reasoningTokens?: number;
  /** GPU energy above idle this request caused (J): its prompt's prefill and its share of each decode step. */
  energyJ?: number;
  prefillEnergyJ?: number;
}

/**
 * Appends truth records as JSON lines. Lines of one event-loop turn are batched into one
 * synchronous append, so a reader sees a request's line almost as soon as it ended, and the
 * file is complete once close() returns.
 */
export class TruthLog {
  private pending: string[] = [];
  private scheduled = false;

  constructor(private readonly file: string) {
    writeFileSync(file, '');
  }

  /** Queues one record. */
  write(record: TruthRecord): void {
    this.pending.push(JSON.stringify(record));
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
  }

  /** Writes everything queued so far. */
  flush(): void {
    this.scheduled = false;
    if (this.pending.length === 0) return;
    const text = this.pending.join('\n') + '\n';
    this.pending = [];
    appendFileSync(this.file, text);
  }
}
