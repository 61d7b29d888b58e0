/** Bytes of reads waiting to be parsed from which a finished response holds its lane back (16 MiB). */
export const PARSE_BACKLOG_BYTES = 16 * 2 ** 20;

/** Reads waiting from which it does too: each holds its whole request (headers, decoder, socket buffer) meanwhile. */
export const PARSE_BACKLOG_TASKS = 4_096;

/**
 * Work deferred out of the network callbacks: a read is timestamped and queued at once, and parsed in
 * slices of at most `budgetMs` between I/O polls. So parsing the chunks of a busy stream never delays the
 * clock reading of another stream's first token by more than one slice.
 */
export class ParseQueue {
  private tasks: Array<() => void> = [];
  private sizes: number[] = [];
  private bytes = 0;
  private head = 0;
  private scheduled = false;
  private readonly budgetNs: bigint;
  private waiting: Array<() => void> = [];

  constructor(budgetMs = 1) {
    this.budgetNs = BigInt(Math.round(budgetMs * 1e6));
  }

  /** Queues a task holding `bytes` of a read until it runs. */
  push(task: () => void, bytes = 0): void {
    this.tasks.push(task);
    this.sizes.push(bytes);
    this.bytes += bytes;
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.run);
    }
  }

  /** Bytes of the reads queued and not yet parsed. */
  get backlogBytes(): number {
    return this.bytes;
  }

  /**
   * Calls `then` at once, or, while more than PARSE_BACKLOG_TASKS reads or PARSE_BACKLOG_BYTES wait, once half of that
   * is left: a client
   * that cannot parse as fast as it reads sends its next request later (and the level's offered load says so) instead
   * of holding every unparsed read in memory.
   */
  afterBacklog(then: () => void): void {
    if (this.bytes <= PARSE_BACKLOG_BYTES && this.backlog <= PARSE_BACKLOG_TASKS) then();
    else this.waiting.push(then);
  }

  /** Tasks queued and not yet run. */
  get backlog(): number {
    return this.tasks.length - this.head;
  }

  private release(): void {
    if (this.waiting.length === 0) return;
    if (this.bytes > PARSE_BACKLOG_BYTES / 2 || this.backlog > PARSE_BACKLOG_TASKS / 2) return;
    const ready = this.waiting;
    this.waiting = [];
    for (const then of ready) then();
  }

  private readonly run = (): void => {
    const deadline = process.hrtime.bigint() + this.budgetNs;
    let n = 0;
    while (this.head < this.tasks.length) {
      const task = this.tasks[this.head] as () => void;
      this.bytes -= this.sizes[this.head++] as number;
      task();
      // Reading the clock costs ~50 ns: check it every few tasks only.
      if ((++n & 7) === 0 && process.hrtime.bigint() > deadline) break;
    }
    if (this.head >= this.tasks.length) {
      this.tasks = [];
      this.sizes = [];
      this.head = 0;
      this.scheduled = false;
    } else {
      if (this.head > 4096) {
        this.tasks = this.tasks.slice(this.head);
        this.sizes = this.sizes.slice(this.head);
        this.head = 0;
      }
      setImmediate(this.run);
    }
    this.release();
  };
}
