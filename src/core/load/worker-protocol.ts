import type { AbortReason, RequestOutcome, RequestSpec } from './stream-client.js';

/** Messages from the scheduler's thread to a load worker. */
export type ToWorker =
  | { type: 'init'; baseUrl: string; apiKey?: string; originMonoNs: string }
  | { type: 'exec'; spec: RequestSpec }
  | { type: 'abort'; reason?: AbortReason }
  | { type: 'lag-start' }
  | { type: 'lag-end' }
  | { type: 'close' };

/** Messages from a load worker back: 'ended' (the response is over on the wire) comes before that request's 'done'. */
export type FromWorker =
  | { type: 'ended'; id: number }
  | { type: 'done'; outcome: RequestOutcome }
  | { type: 'lag'; p99Ms: number | null }
  | { type: 'closed' };
