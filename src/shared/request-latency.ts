import { requestE2eMs, requestTtftMs, type RequestRecord } from './request-record.js';

/** Where a request is drawn on the latency-over-time chart: when it ended (s, run clock), its TTFT and E2E (ms). */
export interface RequestLatencyPoint {
  tS: number;
  ttftMs: number | null;
  e2eMs: number;
}

/** A measured request's point on the latency chart; null for a warm-up, a failure or one that never ended. */
export function requestLatencyPoint(r: RequestRecord): RequestLatencyPoint | null {
  if (r.warmup || !r.ok || r.endMs === null) return null;
  return {
    tS: r.endMs / 1000,
    ttftMs: requestTtftMs(r),
    e2eMs: requestE2eMs(r) ?? 0,
  };
}
