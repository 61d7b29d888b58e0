import { fmtCounts } from '../../shared/format.js';
import type { RequestRecord } from '../../shared/request-record.js';
import { commonestError, serverSaid } from '../metrics/error-summary.js';
import { isCancelled, isMeasured } from '../metrics/request-metrics.js';
import { countBy } from './helpers.js';
import { defineCheck } from './define.js';
import { judged, type Judged } from './verdict.js';

/** Failed-request share up to which the errors check only warns. */
const ERROR_WARN_LIMIT = 0.01;

/**
 * errors: failed requests are counted, never dropped; warns up to 1 % failed, fails above, counting by error kind and
 * quoting the server's commonest message.
 * Requests the user cancelled (errorKind 'cancelled') are no server failure: left out of the count and the share,
 * and only named. A dying server ('server-died') is a failure. Multi-turn: `skippedTurns` (later turns of conversations
 * whose earlier turn failed, never sent) are named, not counted in the share.
 */
export function errorsCheck(records: readonly RequestRecord[], skippedTurns = 0): Judged {
  const all = records.filter(isMeasured);
  const cancelled = all.filter(isCancelled).length;
  const measured = all.filter((r) => !isCancelled(r));
  const failed = measured.filter((r) => !r.ok);
  const share = measured.length > 0 ? failed.length / measured.length : 0;
  const facts = {
    failed: failed.length,
    requests: measured.length,
    share,
    cancelled,
    skippedTurns,
    limit: ERROR_WARN_LIMIT,
  };
  if (failed.length === 0) return judged('errors', 'pass', 'none-failed', facts);
  const top = commonestError(failed);
  const withKinds = {
    ...facts,
    errorKinds: fmtCounts(countBy(failed, (r) => r.errorKind ?? 'unknown')),
    commonestKind: top?.kind ?? null,
    commonestMessage: top?.message ?? null,
    commonestCount: top?.count ?? null,
    serverSaid: top ? serverSaid(top) : '',
  };
  return share <= ERROR_WARN_LIMIT
    ? judged('errors', 'warn', 'few-failed', withKinds)
    : judged('errors', 'fail', 'too-many-failed', withKinds);
}

export const errors = defineCheck('errors', {
  limits: { warnShare: ERROR_WARN_LIMIT },
  evaluate: (e) => errorsCheck(e.measured, e.skippedTurns),
});
