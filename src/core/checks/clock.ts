import type { WorkerLevelView } from '../../shared/distributed.js';
import type { RoundResult } from '../../shared/run-record.js';
import { workerName } from '../distributed/coordinator.js';
import { defineCheck } from './define.js';
import { judged, type Judged } from './verdict.js';

/** A window error from the clocks up to this share of the shortest round passes the clock check; up to WARN warns. */
const CLOCK_ERROR_LIMITS = { pass: 0.01, warn: 0.05 } as const;

/**
 * clock: how far the workers' clocks, mapped onto rank 0's, can move a round's window (and so its throughput): twice
 * the largest offset uncertainty plus the largest change of an offset over the level, against the shortest complete
 * round. Latencies are untouched (each is measured on one worker's clock). Fails past 5 %, warns past 1 %.
 */
export function clockCheck(views: readonly WorkerLevelView[], rounds: readonly RoundResult[]): Judged {
  const remote = views.filter((v) => v.rank !== 0);
  const unknown = remote.filter((v) => v.uncertaintyMs === null && v.requests > 0);
  const uncertaintyMs = remote.reduce((m, v) => Math.max(m, v.uncertaintyMs ?? 0), 0);
  const changeMs = remote.reduce((m, v) => Math.max(m, Math.abs(v.offsetChangeMs ?? 0)), 0);
  const complete = rounds.filter((r) => r.partial !== true);
  const windowMs = complete.length > 0 ? complete.reduce((m, r) => Math.min(m, r.windowMs), Infinity) : null;
  const errorMs = 2 * uncertaintyMs + changeMs;
  const error = windowMs !== null && windowMs > 0 ? errorMs / windowMs : null;
  const facts = {
    uncertaintyMs,
    offsetChangeMs: changeMs,
    windowErrorMs: errorMs,
    shortestRoundMs: windowMs,
    windowError: error,
  };
  if (unknown.length > 0) {
    const workers = unknown.map((v) => workerName(v.rank, v.host)).join(', ');
    return judged('clock', 'warn', 'offset-missing', { ...facts, workersWithoutOffset: workers });
  }
  if (error === null) return judged('clock', 'pass', 'clocks-agree', facts);
  if (error > CLOCK_ERROR_LIMITS.warn) return judged('clock', 'fail', 'clocks-too-coarse', facts);
  return error > CLOCK_ERROR_LIMITS.pass
    ? judged('clock', 'warn', 'clocks-coarse', facts)
    : judged('clock', 'pass', 'clocks-agree', facts);
}

export const clock = defineCheck('clock', {
  limits: { passWindowError: CLOCK_ERROR_LIMITS.pass, warnWindowError: CLOCK_ERROR_LIMITS.warn },
  evaluate: (e) => (e.workers ? clockCheck(e.workers, e.rounds) : null),
});
