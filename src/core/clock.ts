/** A monotonic clock in ms relative to an origin; every time in a run uses one. */
export interface Clock {
  /** ms after the origin. */
  nowMs(): number;
  /** The origin on process.hrtime.bigint()'s scale (system-wide CLOCK_MONOTONIC on Linux). */
  readonly originMonoNs: bigint;
}

/** Converts an absolute monotonic ns reading (e.g. from another process) to ms after origin. */
export function monoNsToMs(clock: Clock, monoNs: bigint): number {
  return Number(monoNs - clock.originMonoNs) / 1e6;
}

/** The real monotonic clock, origin = now unless given. */
export function createMonoClock(originMonoNs: bigint = process.hrtime.bigint()): Clock {
  return {
    originMonoNs,
    nowMs: () => Number(process.hrtime.bigint() - originMonoNs) / 1e6,
  };
}
