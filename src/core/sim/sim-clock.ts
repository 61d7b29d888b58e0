/** An opaque handle of a timer set with SimClock.setTimer. */
export type SimTimer = unknown;

/**
 * Time and timers of the simulated engine. Production uses the real clock (realSimClock); unit
 * tests pass a virtual one and step it, so the same inputs give the same states on any machine.
 */
export interface SimClock {
  /** Milliseconds on a monotonic scale (step schedule, GPU model, TTFT, slow-start). */
  nowMs(): number;
  /** Nanoseconds on process.hrtime.bigint()'s scale (truth-log timestamps). */
  nowNs(): bigint;
  /** Runs fn once, ms from now; an unref'd timer does not keep the process alive. */
  setTimer(fn: () => void, ms: number, unref?: boolean): SimTimer;
  /** Cancels a timer set by setTimer (no-op when it already ran). */
  clearTimer(timer: SimTimer): void;
}

/** The real clock: performance.now(), process.hrtime.bigint() and Node's timers. */
export const realSimClock: SimClock = {
  nowMs: () => performance.now(),
  nowNs: () => process.hrtime.bigint(),
  setTimer: (fn, ms, unref = false) => {
    const t = setTimeout(fn, ms);
    if (unref) t.unref();
    return t;
  },
  clearTimer: (timer) => clearTimeout(timer as NodeJS.Timeout),
};
