import type { SimClock, SimTimer } from '../../../src/core/sim/index.js';

interface Pending {
  id: number;
  dueMs: number;
  fn: () => void;
}

/**
 * A virtual SimClock for tests: time stands still until the test moves it, and timers run in the
 * order of their due times (ties: the order they were set), each with the clock at its due time.
 */
export class VirtualClock implements SimClock {
  private t = 0;
  private nextId = 1;
  private pending: Pending[] = [];

  nowMs(): number {
    return this.t;
  }

  nowNs(): bigint {
    return BigInt(Math.round(this.t * 1e6));
  }

  setTimer(fn: () => void, ms: number): SimTimer {
    const id = this.nextId++;
    this.pending.push({ id, dueMs: this.t + Math.max(0, ms), fn });
    return id;
  }

  clearTimer(timer: SimTimer): void {
    this.pending = this.pending.filter((p) => p.id !== timer);
  }

  /** Due time of the next timer, or null when none is set. */
  nextDueMs(): number | null {
    return this.first()?.dueMs ?? null;
  }

  /** Moves to the next timer's due time and runs that one timer; false when none is set. */
  runNext(): boolean {
    const p = this.first();
    if (!p) return false;
    this.pending = this.pending.filter((q) => q !== p);
    this.t = Math.max(this.t, p.dueMs);
    p.fn();
    return true;
  }

  /** Moves time forward by ms, running every timer due by then, in order. */
  advance(ms: number): void {
    const end = this.t + ms;
    for (let due = this.nextDueMs(); due !== null && due <= end; due = this.nextDueMs()) this.runNext();
    this.t = end;
  }

  /** Runs timers until none is left (a bound stops a model that would tick forever). */
  runAll(maxTimers = 1_000_000): void {
    for (let i = 0; i < maxTimers; i++) if (!this.runNext()) return;
    throw new Error(`still timers pending after ${maxTimers}`);
  }

  private first(): Pending | undefined {
    let best: Pending | undefined;
    for (const p of this.pending) if (!best || p.dueMs < best.dueMs) best = p;
    return best;
  }
}
