import type { Slo } from '../../shared/config.js';
import type { RequestRecord } from '../../shared/request-record.js';
import { isCancelled, isMeasured, requestMetrics } from './request-metrics.js';

/** True when an ok request meets every SLO given; a failed request never does. */
export function meetsSlo(record: RequestRecord, slo: Slo): boolean {
  if (!record.ok) return false;
  const m = requestMetrics(record);
  if (slo.ttftMs !== undefined && (m.ttftMs === null || m.ttftMs > slo.ttftMs)) return false;
  if (slo.e2eMs !== undefined && (m.e2eMs === null || m.e2eMs > slo.e2eMs)) return false;
  // TPOT is undefined for a single-token answer; such a request cannot break a TPOT SLO.
  if (slo.tpotMs !== undefined && m.tpotMs !== null && m.tpotMs > slo.tpotMs) return false;
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
