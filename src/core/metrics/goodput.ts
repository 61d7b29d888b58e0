import type { Slo } from '../../shared/config.js';
import { QUANTITIES } from '../../shared/metrics.js';
import type { RequestRecord } from '../../shared/request-record.js';
import { isCancelled, isMeasured } from './request-metrics.js';

/** Each per-request limit and the registry quantity it bounds. */
const LIMITS = [
  ['ttftMs', 'ttft'],
  ['e2eMs', 'e2e'],
  ['tpotMs', 'tpot'],
] as const;

/** True when an ok request meets every SLO given; a failed request never does. */
export function meetsSlo(record: RequestRecord, slo: Slo): boolean {
  if (!record.ok) return false;
  for (const [key, id] of LIMITS) {
    const limit = slo[key];
    if (limit === undefined) continue;
    const v = QUANTITIES[id].perRequest(record);
    // TPOT is undefined for a single-token answer; such a request cannot break a TPOT SLO.
    if (v === null ? id !== 'tpot' : v > limit) return false;
  }
  return true;
}

/**
 * Goodput: share (0..1) of measured requests, failed included, that completed within every SLO; null with none.
 * Requests the user cancelled are left out: they neither met nor missed an SLO.
 */
export function goodput(records: readonly RequestRecord[], slo: Slo): number | null {
  const measured = records.filter((r) => isMeasured(r) && !isCancelled(r));
  if (measured.length === 0) return null;
  return measured.filter((r) => meetsSlo(r, slo)).length / measured.length;
}
