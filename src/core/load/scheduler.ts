import type { Clock } from '../clock.js';
import type { RequestExecutor } from './executor.js';
import type { RequestOutcome, RequestSpec } from './stream-client.js';

/** Requests to send, by index: an array, or a list that builds each one when it is sent (a body is held only then). */
export interface SpecList {
  readonly length: number;
  at(index: number): RequestSpec | undefined;
}

/** An outcome plus, in open loop, when the schedule wanted the request sent. */
export type ScheduledOutcome = RequestOutcome & { scheduledMs?: number };

/** A request handed to an executor: its slot is free at `freed` (wire end), its outcome parsed at `outcome`. */
export interface SentRequest {
  freed: Promise<void>;
  outcome: Promise<RequestOutcome>;
}

/** Sends one request; `freed` resolves when its response ended on the wire (or, at the latest, with its outcome). */
export function sendRequest(executor: RequestExecutor, spec: RequestSpec): SentRequest {
  let free: () => void = () => undefined;
  const freed = new Promise<void>((resolve) => {
    free = resolve;
  });
  const outcome = executor.execute(spec, () => free());
  outcome.then(free, free);
  return { freed, outcome };
}

/**
 * Closed loop: exactly `concurrency` requests in flight until the list is done (or the signal fires). A lane sends
 * its next request as soon as its last response ended on the wire; the outcome is recorded once parsed. With
 * `retain` false the outcomes go to onOutcome only (a long level keeps none of them).
 */
export async function runClosedLoop(
  specs: SpecList,
  concurrency: number,
  executor: RequestExecutor,
  onOutcome: (outcome: ScheduledOutcome) => void,
  signal?: AbortSignal,
  retain = true,
): Promise<ScheduledOutcome[]> {
  const outcomes: ScheduledOutcome[] = [];
  const parsed = new Set<Promise<void>>();
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < specs.length && !signal?.aborted) {
      const sent = sendRequest(executor, specs.at(next++) as RequestSpec);
      const done: Promise<void> = sent.outcome.then((outcome) => {
        parsed.delete(done);
        if (retain) outcomes.push(outcome);
        onOutcome(outcome);
      });
      parsed.add(done);
      await sent.freed;
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, specs.length) }, lane));
  await Promise.all(parsed);
  return outcomes;
}

/** Exponential inter-arrival gaps for a Poisson process at `rate` per second, as absolute ms offsets. */
export function poissonSchedule(count: number, ratePerSec: number, rng: () => number): number[] {
  const times: number[] = [];
  let t = 0;
  for (let i = 0; i < count; i++) {
    times.push(t);
    t += (-Math.log(1 - rng()) / ratePerSec) * 1000;
  }
  return times;
}

/** A trace's arrivals as offsets from its first, or from `originMs` (each round replays them). */
export function traceSchedule(schedule: readonly number[], originMs?: number): number[] {
  const first = originMs ?? schedule[0] ?? 0;
  return schedule.map((t) => t - first);
}

/** Resolves once `clock` reads at least `tMs` (or the signal fires); the real-time wait of the open loop. */
export async function waitUntil(clock: Clock, tMs: number, signal?: AbortSignal): Promise<void> {
  // Timers run on a millisecond loop clock and can fire a little early: finish the last stretch with setImmediate.
  for (;;) {
    const delay = tMs - clock.nowMs();
    if (delay <= 0 || signal?.aborted) return;
    await new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const timer = delay > 2 ? setTimeout(done, delay - 1) : undefined;
      if (!timer) setImmediate(done);
      signal?.addEventListener('abort', done, { once: true });
    });
  }
}

/** Waits until a time on the open loop's clock; tests pass one that advances a virtual clock. */
export type WaitUntil = (tMs: number, signal?: AbortSignal) => Promise<void>;

/**
 * Open loop: requests leave on an absolute Poisson schedule (not "gap after the last send", which would drift),
 * optionally capped at `maxConcurrency` in flight; send - scheduled is the schedule lag. `retain` as runClosedLoop.
 */
export async function runOpenLoop(
  specs: SpecList,
  offsetsMs: number[],
  maxConcurrency: number | undefined,
  executor: RequestExecutor,
  clock: Clock,
  onOutcome: (outcome: ScheduledOutcome) => void,
  signal?: AbortSignal,
  wait: WaitUntil = (tMs, s) => waitUntil(clock, tMs, s),
  retain = true,
): Promise<ScheduledOutcome[]> {
  const start = clock.nowMs() + 5;
  const outcomes: ScheduledOutcome[] = [];
  // In flight (for the cap): until the response ended on the wire; parsed: until the outcome is recorded.
  const running = new Set<Promise<void>>();
  const parsed = new Set<Promise<void>>();
  for (let i = 0; i < specs.length && !signal?.aborted; i++) {
    const scheduledMs = start + (offsetsMs[i] ?? 0);
    await wait(scheduledMs, signal);
    if (signal?.aborted) break;
    while (maxConcurrency !== undefined && running.size >= maxConcurrency) await Promise.race(running);
    if (signal?.aborted) break;
    const sent = sendRequest(executor, specs.at(i) as RequestSpec);
    const slot: Promise<void> = sent.freed.then(() => {
      running.delete(slot);
    });
    running.add(slot);
    const done: Promise<void> = sent.outcome.then((outcome) => {
      parsed.delete(done);
      const scheduled = { ...outcome, scheduledMs };
      if (retain) outcomes.push(scheduled);
      onOutcome(scheduled);
    });
    parsed.add(done);
  }
  await Promise.all(parsed);
  return outcomes;
}
