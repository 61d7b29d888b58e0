import { fmtCounts } from '../../shared/format.js';
import type { RequestRecord } from '../../shared/request-record.js';
import { countBy } from './helpers.js';
import { defineCheck } from './define.js';
import { judged, type Judged } from './verdict.js';

/**
 * warmup: warm-up requests (records with warmup true) were sent and discarded before measuring. Passes when at
 * least one of them succeeded; warns when warm-up was off, or when every warm-up request failed (the server was not
 * warmed by them).
 */
export function warmupCheck(records: readonly RequestRecord[]): Judged {
  const warmup = records.filter((r) => r.warmup);
  const ok = warmup.filter((r) => r.ok).length;
  const facts = { warmupRequests: warmup.length, succeeded: ok, failed: warmup.length - ok };
  if (warmup.length === 0) return judged('warmup', 'warn', 'warmup-off', facts);
  if (ok === 0) {
    const errorKinds = fmtCounts(countBy(warmup, (r) => r.errorKind ?? 'unknown'));
    return judged('warmup', 'warn', 'warmup-failed', { ...facts, errorKinds });
  }
  return judged('warmup', 'pass', 'warmed', facts);
}

export const warmup = defineCheck('warmup', { limits: {}, evaluate: (e) => warmupCheck(e.records) });
