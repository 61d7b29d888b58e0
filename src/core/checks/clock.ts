import type { WorkerLevelView } from '../../shared/distributed.js';
import type { CheckStatus, RoundResult } from '../../shared/run-record.js';
import { fmtNum, fmtPct } from '../metrics/format.js';
import { workerName } from '../distributed/coordinator.js';
import { defineCheck } from './define.js';
import { verdict, type Judged } from './verdict.js';

/** A window error from the clocks up to this share of the shortest round passes the clock check; up to WARN warns. */
export const CLOCK_ERROR_LIMITS = { pass: 0.01, warn: 0.05 } as const;

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
  const windowMs = complete.length > 0 ? Math.min(...complete.map((r) => r.windowMs)) : null;
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
    const names = unknown.map((v) => workerName(v.rank, v.host)).join(', ');
    return verdict(
      'clock',
      'warn',
      'offset-missing',
      facts,
      `${names} sent requests without a clock offset: their times on rank 0's timeline are not corrected`,
    );
  }
  const figures = `offsets known within ±${fmtNum(uncertaintyMs)} ms, moving at most ${fmtNum(changeMs)} ms over the level`;
  if (error === null) {
    return verdict(
      'clock',
      'pass',
      'clocks-agree',
      facts,
      `${figures}; no complete round to hold it against (latencies are each worker's own)`,
    );
  }
  const where = `a round window (shortest ${fmtNum(windowMs as number)} ms) is exact to within ${fmtNum(errorMs)} ms (${fmtPct(error)})`;
  if (error > CLOCK_ERROR_LIMITS.warn) {
    return verdict(
      'clock',
      'fail',
      'clocks-too-coarse',
      facts,
      `${figures}: ${where}, too coarse for this level's throughput; run longer rounds or reach rank 0 over a quieter network`,
    );
  }
  const status: CheckStatus = error > CLOCK_ERROR_LIMITS.pass ? 'warn' : 'pass';
  return verdict(
    'clock',
    status,
    status === 'pass' ? 'clocks-agree' : 'clocks-coarse',
    facts,
    `${figures}: ${where}; latencies are each worker's own`,
  );
}

export const clock = defineCheck('clock', {
  limits: { passWindowError: CLOCK_ERROR_LIMITS.pass, warnWindowError: CLOCK_ERROR_LIMITS.warn },
  evaluate: (e) => (e.workers ? clockCheck(e.workers, e.rounds) : null),
});
