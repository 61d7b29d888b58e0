import { isPooling, type EndpointKind } from './endpoint-kinds.js';

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

/** What kind of load a level ran: a fixed number in flight, an arrival rate, or one burst of requests at once. */
export type LoadKind = 'concurrency' | 'rate' | 'burst';

/** The level's kind of load (a burst first: its concurrency is only the in-flight cap, often 0). */
export function loadKind(l: LevelLoad): LoadKind {
  if (l.burst !== undefined) return 'burst';
  return l.rate !== undefined ? 'rate' : 'concurrency';
}

/** The level's load as a number on its kind's axis: the burst size, the rate (req/s) or the concurrency. */
export function loadValue(l: LevelLoad): number {
  return l.burst ?? l.rate ?? l.concurrency;
}

const AXIS: Record<LoadKind, string> = {
  concurrency: 'concurrency (requests in flight)',
  rate: 'request rate (req/s)',
  burst: 'burst size (requests at once)',
};

/** An axis label for the kinds of load present, in a fixed order (several kinds share one axis only when mixed). */
export function loadAxisLabel(kinds: Iterable<LoadKind>): string {
  const present = new Set(kinds);
  const order: LoadKind[] = ['burst', 'rate', 'concurrency'];
  const labels = order.filter((k) => present.has(k)).map((k) => AXIS[k]);
  return labels.length > 0 ? labels.join(' / ') : AXIS.concurrency;
}

/** A level's lengths and, for a pooling kind, how many inputs a request carries. */
export interface LevelLengths {
  inputLen: number;
  outputLen: number;
  /** Pooling levels only (embeddings, rerank): absent for a generation. */
  endpoint?: EndpointKind;
  batchSize?: number;
}

/**
 * A level's lengths in a label: "512/24" (`flags`: "in=512 out=24") for a generation; for embeddings and rerank,
 * which generate nothing, the inputs per request and their length, "16×256" (`flags`: "batch=16 in=256").
 */
export function lengthsText(l: LevelLengths, flags = false): string {
  if (isPooling(l.endpoint)) {
    const batch = l.batchSize ?? 1;
    return flags ? `batch=${batch} in=${l.inputLen}` : `${batch}×${l.inputLen}`;
  }
  return flags ? `in=${l.inputLen} out=${l.outputLen}` : `${l.inputLen}/${l.outputLen}`;
}
