import type { RoundResult } from '../../shared/run-record.js';
import { defineCheck } from './define.js';
import type { CutShort } from './evidence.js';
import { judged, type Judged } from './verdict.js';

/**
 * cut-short: the level ended before its rounds were done. Fails when the server ended it, warns on a user cancel;
 * says whether throughput, cost and round spread come from the complete rounds or, with none, do not exist (a partial
 * round's rate counts the requests that finished before the crash over a window they did not fill).
 */
export function cutShortCheck(cut: CutShort, rounds: readonly RoundResult[]): Judged {
  const partial = rounds.filter((r) => r.partial === true);
  const facts = {
    reason: cut.reason,
    completeRounds: rounds.length - partial.length,
    partialRounds: partial.length,
    completedInPartial: partial.reduce((a, r) => a + r.completed, 0),
    failedInPartial: partial.reduce((a, r) => a + r.failed, 0),
  };
  return cut.byServer
    ? judged('cut-short', 'fail', 'server-failed', facts)
    : judged('cut-short', 'warn', 'cancelled', facts);
}

export const cutShort = defineCheck('cut-short', {
  limits: {},
  evaluate: (e) => (e.cutShort ? cutShortCheck(e.cutShort, e.rounds) : null),
});
