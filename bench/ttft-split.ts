// bench:client's split of self-TTFT against the simulator's truth log, and what else ran meanwhile (CPU waits, GC).
import { readFileSync } from 'node:fs';
import { PerformanceObserver, performance } from 'node:perf_hooks';
import { monoNsToMs } from '../src/core/clock.js';
import type { Clock } from '../src/core/clock.js';
import type { RequestExecutor } from '../src/core/load/executor.js';
import type { ScheduledOutcome } from '../src/core/load/scheduler.js';
import type { TruthRecord } from '../src/core/sim/truth-log.js';

/** ms the main thread of `pid` has waited on a CPU run queue so far (Linux schedstat); null where unreadable. */
export function runQueueWaitMs(pid: number): number | null {
  try {
    const field = readFileSync(`/proc/${pid}/task/${pid}/schedstat`, 'utf8').split(' ')[1];
    const ns = Number(field);
    return Number.isFinite(ns) ? ns / 1e6 : null;
  } catch {
    return null;
  }
}

/** Run-queue wait (ms) of the client's and the simulator's main threads during one request, send to end. */
export interface CpuWait {
  client: number | null;
  sim: number | null;
}

/** Wraps an executor so that each request's CPU waits are recorded by request tag. */
export function watchCpuWaits(
  executor: RequestExecutor,
  simPid: number,
): { executor: RequestExecutor; waits: Map<string, CpuWait> } {
  const waits = new Map<string, CpuWait>();
  const sub = (a: number | null, b: number | null): number | null => (a === null || b === null ? null : a - b);
  return {
    waits,
    executor: {
      ...executor,
      threads: executor.threads,
      execute: async (spec) => {
        const c0 = runQueueWaitMs(process.pid);
        const s0 = runQueueWaitMs(simPid);
        const outcome = await executor.execute(spec);
        waits.set(spec.requestTag, {
          client: sub(runQueueWaitMs(process.pid), c0),
          sim: sub(runQueueWaitMs(simPid), s0),
        });
        return outcome;
      },
    },
  };
}

/** Records this process's GC pauses as [start, end] on `clock`'s scale (ms after its origin). */
export function recordGcPauses(clock: Clock): { pauses: Array<[number, number]>; stop(): void } {
  const offset = clock.nowMs() - performance.now();
  const pauses: Array<[number, number]> = [];
  const observer = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) pauses.push([e.startTime + offset, e.startTime + offset + e.duration]);
  });
  observer.observe({ entryTypes: ['gc'] });
  return { pauses, stop: () => observer.disconnect() };
}

/** The simulator's truth log by request id (x-request-id). */
export function readTruth(file: string): Map<string, TruthRecord> {
  const byTag = new Map<string, TruthRecord>();
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line) continue;
    const t = JSON.parse(line) as TruthRecord;
    if (t.requestId) byTag.set(t.requestId, t);
  }
  return byTag;
}

/** One request's self-TTFT split at the simulator's two timestamps (ms). */
export interface TtftSplit {
  selfMs: number;
  /** Client's send to the simulator's 'request' event: client dispatch, loopback, the simulator waking up. */
  requestLegMs: number;
  /** The simulator's own: request received to the first token written (its truth log). */
  serverMs: number;
  /** Written to read by the client: loopback and the client waking up (the TTFT error). */
  responseLegMs: number;
  /** The client's own share: self-TTFT minus the server's share (both legs). */
  ownMs: number;
  cpuWait: CpuWait | null;
  /** Client GC pause time inside send → first token. */
  gcMs: number;
}

/** Splits each request's self-TTFT by its truth record; requests without one (or without a token) are left out. */
export function splitTtft(
  outcomes: ScheduledOutcome[],
  truth: Map<string, TruthRecord>,
  clock: Clock,
  waits: Map<string, CpuWait>,
  gcPauses: Array<[number, number]>,
): TtftSplit[] {
  const splits: TtftSplit[] = [];
  for (const o of [...outcomes].sort((a, b) => a.sendMs - b.sendMs)) {
    const t = truth.get(o.requestTag);
    const first = o.result.firstTokenMs;
    if (!t || t.firstTokenNs === null || first === null || o.result.error !== null) continue;
    const receivedMs = monoNsToMs(clock, BigInt(t.receivedNs));
    const writtenMs = monoNsToMs(clock, BigInt(t.firstTokenNs));
    let gcMs = 0;
    for (const [a, b] of gcPauses) gcMs += Math.max(0, Math.min(b, first) - Math.max(a, o.sendMs));
    splits.push({
      selfMs: first - o.sendMs,
      requestLegMs: receivedMs - o.sendMs,
      serverMs: writtenMs - receivedMs,
      responseLegMs: first - writtenMs,
      ownMs: first - o.sendMs - (writtenMs - receivedMs),
      cpuWait: waits.get(o.requestTag) ?? null,
      gcMs,
    });
  }
  return splits;
}

/** Run-queue wait above which a request counts as having waited for a CPU (a wake-up alone costs microseconds). */
export const CPU_WAIT_MS = 0.1;

/** Whether the client or the simulator waited for a CPU during this request; null where schedstat is unreadable. */
export function waitedForCpu(s: TtftSplit): boolean | null {
  const w = s.cpuWait;
  if (!w || w.client === null || w.sim === null) return null;
  return w.client >= CPU_WAIT_MS || w.sim >= CPU_WAIT_MS;
}
