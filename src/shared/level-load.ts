/** A level's load as the run states it: closed loop, an arrival rate, or a trace whose arrivals all share one time. */
export interface LevelLoad {
  concurrency: number;
  /** Open loop: req/s; absent in closed loop and for a burst. */
  rate?: number;
  /** Trace replay whose arrivals span 0 ms: this many requests at once (it has no arrival rate). */
  burst?: number;
}

/**
 * The load in a label: "burst of N at once", "R req/s" (`short`: "R/s") or "c=N"; a burst never gets a rate, since
 * arrivals at one instant have none.
 */
export function loadText(l: LevelLoad, short = false): string {
  if (l.burst !== undefined) return short ? `burst ×${l.burst}` : `burst of ${l.burst} at once`;
  if (l.rate !== undefined) return short ? `${l.rate}/s` : `${l.rate} req/s`;
  return `c=${l.concurrency}`;
}
