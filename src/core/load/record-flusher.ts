import type { RequestRecord } from '../../shared/request-record.js';

/** Records handed on at a time: a batch's text is small, whatever the round's size. */
const FLUSH_RECORDS = 256;

/** Finished records held back waiting for an earlier id before they go out anyway (a hung request holds no more). */
const REORDER_RECORDS = 4_096;

/**
 * Hands finished records on in batches as they finish, in id order where a bounded wait allows (a request still
 * running holds back at most REORDER_RECORDS later ones); `endBatch` hands on everything left of a batch.
 */
export class RecordFlusher {
  private readonly pending = new Map<number, RequestRecord>();
  private ready: RequestRecord[] = [];
  private nextId = 0;

  constructor(
    private readonly emit: (records: RequestRecord[]) => void,
    private readonly batch = FLUSH_RECORDS,
    private readonly reorder = REORDER_RECORDS,
  ) {}

  /** Starts a batch (warm-up or round) whose requests are numbered from `firstId`. */
  startBatch(firstId: number): void {
    this.nextId = firstId;
  }

  push(record: RequestRecord): void {
    this.pending.set(record.id, record);
    while (this.pending.has(this.nextId)) {
      this.ready.push(this.pending.get(this.nextId)!);
      this.pending.delete(this.nextId++);
    }
    if (this.pending.size > this.reorder) this.drainPending();
    if (this.ready.length >= this.batch) this.flush();
  }

  /** Hands on every record of the batch not yet handed on. */
  endBatch(): void {
    this.drainPending();
    this.flush();
  }

  private drainPending(): void {
    const rest = [...this.pending.values()].sort((a, b) => a.id - b.id);
    this.pending.clear();
    for (const r of rest) this.ready.push(r);
    if (rest.length > 0) this.nextId = Math.max(this.nextId, rest[rest.length - 1]!.id + 1);
  }

  private flush(): void {
    if (this.ready.length === 0) return;
    const out = this.ready;
    this.ready = [];
    this.emit(out);
  }
}
