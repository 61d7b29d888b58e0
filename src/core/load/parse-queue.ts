/** Reads waiting to be parsed from which a finished response holds its lane back (each holds its bytes meanwhile). */
export const PARSE_BACKLOG_HIGH = 4_096;

/**
 * Work deferred out of the network callbacks: a read is timestamped and queued at once, and parsed in
 * slices of at most `budgetMs` between I/O polls. So parsing the chunks of a busy stream never delays the
 * clock reading of another stream's first token by more than one slice.
 */
export class ParseQueue {
  private tasks: Array<() => void> = [];
  private head = 0;
  private scheduled = false;
  private readonly budgetNs: bigint;
  private waiting: Array<() => void> = [];

  constructor(budgetMs = 1) {
    this.budgetNs = BigInt(Math.round(budgetMs * 1e6));
  }

  push(task: () => void): void {
    this.tasks.push(task);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.run);
    }
  }

  /** Reads queued and not yet parsed. */
  get backlog(): number {
    return this.tasks.length - this.head;
  }

  /**
   * Calls `then` at once, or, while more than PARSE_BACKLOG_HIGH reads wait, once half of that is left: a client that
   * cannot parse as fast as it reads sends its next request later (and the level's offered load says so) instead of
   * holding every unparsed read in memory.
   */
  afterBacklog(then: () => void): void {
    if (this.backlog <= PARSE_BACKLOG_HIGH) then();
    else this.waiting.push(then);
  }

  private release(): void {
    if (this.waiting.length === 0 || this.backlog > PARSE_BACKLOG_HIGH / 2) return;
    const ready = this.waiting;
    this.waiting = [];
    for (const then of ready) then();
  }

  private readonly run = (): void => {
    const deadline = process.hrtime.bigint() + this.budgetNs;
    let n = 0;
    while (this.head < this.tasks.length) {
      const task = this.tasks[this.head++] as () => void;
      task();
      // Reading the clock costs ~50 ns: check it every few tasks only.
      if ((++n & 7) === 0 && process.hrtime.bigint() > deadline) break;
    }
    if (this.head >= this.tasks.length) {
      this.tasks = [];
      this.head = 0;
      this.scheduled = false;
    } else {
      if (this.head > 4096) {
        this.tasks = this.tasks.slice(this.head);
        this.head = 0;
      }
      setImmediate(this.run);
    }
    this.release();
  };
}
