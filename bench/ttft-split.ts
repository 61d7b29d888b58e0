// bench:client's split of self-TTFT against the simulator's truth log, and what else ran meanwhile (CPU waits, GC).
import { closeSync, openSync, readFileSync, readSync, readdirSync } from 'node:fs';
import { PerformanceObserver, performance } from 'node:perf_hooks';
import { monoNsToMs } from '../src/core/clock.js';
import type { Clock } from '../src/core/clock.js';
import type { RequestExecutor } from '../src/core/load/executor.js';
import type { ScheduledOutcome } from '../src/core/load/scheduler.js';
import type { TruthRecord } from '../src/core/sim/truth-log.js';

/** One process's threads as Linux schedstat counts them (fds kept open: a read is one pread of ~2 µs). */
class ProcessCpu {
  private readonly fds: Array<{ fd: number; main: boolean }> = [];
  private readonly buf = Buffer.alloc(128);

  constructor(pid: number) {
    try {
      for (const tid of readdirSync(`/proc/${pid}/task`)) {
        this.fds.push({ fd: openSync(`/proc/${pid}/task/${tid}/schedstat`, 'r'), main: Number(tid) === pid });
      }
    } catch {
      this.close();
    }
  }

  /** [main thread's run-queue wait, other threads' CPU time] in ms so far; null where unreadable. */
  read(): [number, number] | null {
    if (this.fds.length === 0) return null;
    let wait = 0;
    let others = 0;
    for (const { fd, main } of this.fds) {
      let fields: string[];
      try {
        fields = this.buf.toString('latin1', 0, readSync(fd, this.buf, 0, this.buf.length, 0)).split(' ');
      } catch {
        continue; // a thread that ended
      }
      if (main) wait = Number(fields[1]) / 1e6;
      else others += Number(fields[0]) / 1e6;
    }
    return [wait, others];
  }

  close(): void {
    for (const { fd } of this.fds.splice(0)) closeSync(fd);
  }
}

/**
 * What else used the CPUs during one request, send to end (ms): how long each main thread waited on a run queue
 * (runnable, no CPU free), and the CPU time of each process's other threads (V8's JIT compiler and GC helpers).
 */
export interface CpuUse {
  clientWait: number;
  simWait: number;
  clientBackground: number;
  simBackground: number;
}

/** Wraps an executor so that each request's CPU use is recorded by request tag (Linux only; none elsewhere). */
export function watchCpu(
  executor: RequestExecutor,
  simPid: number,
): { executor: RequestExecutor; use: Map<string, CpuUse>; close(): void } {
  const use = new Map<string, CpuUse>();
  const client = new ProcessCpu(process.pid);
  const sim = new ProcessCpu(simPid);
  return {
    use,
    close: () => {
      client.close();
      sim.close();
    },
    executor: {
      ...executor,
      execute: async (spec, onEnded) => {
        const c0 = client.read();
        const s0 = sim.read();
        const outcome = await executor.execute(spec, onEnded);
        const c1 = client.read();
        const s1 = sim.read();
        if (c0 && s0 && c1 && s1) {
          use.set(spec.requestTag, {
            clientWait: c1[0] - c0[0],
            simWait: s1[0] - s0[0],
            clientBackground: c1[1] - c0[1],
            simBackground: s1[1] - s0[1],
          });
        }
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
  cpu: CpuUse | null;
  /** Client GC pause time inside send → first token. */
  gcMs: number;
}

/** Splits each request's self-TTFT by its truth record; requests without one (or without a token) are left out. */
export function splitTtft(
  outcomes: ScheduledOutcome[],
  truth: Map<string, TruthRecord>,
  clock: Clock,
  cpu: Map<string, CpuUse>,
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
      cpu: cpu.get(o.requestTag) ?? null,
      gcMs,
    });
  }
  return splits;
}

/** Run-queue wait above which a request counts as having waited for a CPU (a wake-up alone costs microseconds). */
export const CPU_WAIT_MS = 0.1;

/** Whether the client or the simulator waited for a CPU during this request; null where schedstat is unreadable. */
export function waitedForCpu(s: TtftSplit): boolean | null {
  return s.cpu ? s.cpu.clientWait >= CPU_WAIT_MS || s.cpu.simWait >= CPU_WAIT_MS : null;
}

/** Whether the two processes' own background threads ran at least half as long as their main threads waited. */
export function behindOwnThreads(s: TtftSplit): boolean {
  return s.cpu !== null && s.cpu.clientBackground + s.cpu.simBackground >= (s.cpu.clientWait + s.cpu.simWait) / 2;
}
