import { poissonSchedule } from '../../../src/core/load/scheduler.js';
import { createRng } from '../../../src/core/rng.js';
import type { RequestRecord } from '../../../src/shared/request-record.js';
import { makeRecord } from './make-record.js';

/**
 * A steady continuous-batching server on a virtual clock: `slots` requests decode together, one token each per step
 * of `stepMs + perSlotMs x running` ms, the rest wait in a FIFO queue; every request asks `outputLen` tokens. Only
 * the arrivals are random, so whatever round spread it shows comes from them. `slowRound` (with `slowBy`) makes the
 * server that much slower for one round: a speed change the check must still see.
 */
export interface IdealServer {
  slots: number;
  outputLen: number;
  stepMs: number;
  perSlotMs: number;
  slowRound?: number;
  slowBy?: number;
}

/** Requests per second the server completes with every slot busy. */
export function capacityReqPerSec(s: IdealServer): number {
  return (s.slots * 1000) / (s.outputLen * (s.stepMs + s.perSlotMs * s.slots));
}

/** When each request of one round ends, given its arrivals (ms from the round's start). */
function serve(arrivals: readonly number[], s: IdealServer, slow: number): number[] {
  const ends = new Array<number>(arrivals.length);
  const running: Array<{ id: number; left: number }> = [];
  const queue: number[] = [];
  let t = 0;
  let next = 0;
  while (next < arrivals.length || running.length > 0 || queue.length > 0) {
    while (next < arrivals.length && arrivals[next]! <= t) queue.push(next++);
    while (running.length < s.slots && queue.length > 0) running.push({ id: queue.shift()!, left: s.outputLen });
    if (running.length === 0) {
      t = arrivals[next]!;
      continue;
    }
    t += (s.stepMs + s.perSlotMs * running.length) * slow;
    for (let k = running.length - 1; k >= 0; k--) {
      const r = running[k]!;
      if (--r.left === 0) {
        ends[r.id] = t;
        running.splice(k, 1);
      }
    }
  }
  return ends;
}

/** The measured records of one open-loop level (Poisson arrivals from the real scheduler) on the ideal server. */
export function idealLevel(
  s: IdealServer,
  plan: { rounds: number; requestsPerRound: number; rate: number },
  seed: number,
): RequestRecord[] {
  const rng = createRng(seed);
  const records: RequestRecord[] = [];
  let start = 0;
  for (let round = 0; round < plan.rounds; round++) {
    const arrivals = poissonSchedule(plan.requestsPerRound, plan.rate, rng);
    const ends = serve(arrivals, s, round === s.slowRound ? (s.slowBy ?? 1) : 1);
    arrivals.forEach((a, i) => {
      const sendMs = start + a;
      const endMs = start + ends[i]!;
      records.push(
        makeRecord({
          id: records.length,
          round,
          scheduledMs: sendMs,
          sendMs,
          firstTokenMs: sendMs + (endMs - sendMs) / s.outputLen,
          endMs,
          nOut: s.outputLen,
          expectedOut: s.outputLen,
        }),
      );
    });
    start += Math.max(...ends) + 100;
  }
  return records;
}
