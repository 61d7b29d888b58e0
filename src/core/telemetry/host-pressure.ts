import { fmtShare } from '../../shared/format.js';
import { readFileSync } from 'node:fs';
import type { HostPressure } from '../../shared/run-record.js';

/** Reads a small /proc file, or null where it does not exist (macOS, old kernels, a container without PSI). */
export type ProcReader = (path: string) => string | null;

// /proc/pressure/cpu and a schedstat line are under 200 bytes; more is not one of them.
const MAX_PROC_TEXT = 4096;

/** The real /proc, read synchronously (a few hundred bytes, twice a level). */
export const readProcFile: ProcReader = (path) => {
  try {
    return readFileSync(path, 'utf8').slice(0, MAX_PROC_TEXT);
  } catch {
    return null;
  }
};

/** Where the host's CPU pressure is read (Linux PSI, kernel 4.20+) and this process's run-queue wait. */
export const PROC_PATHS = { psiCpu: '/proc/pressure/cpu', selfSchedstat: '/proc/self/schedstat' } as const;

/** One reading of the host's CPU pressure counters; null where the file is absent or unreadable. */
export interface HostPressureSample {
  tMs: number;
  /** PSI "some" total: µs in which at least one runnable task waited for a CPU. */
  cpuSomeUs: number | null;
  /** This process's main thread (the measuring loop): ns spent waiting on a run queue, runnable but not running. */
  selfWaitNs: number | null;
}

const counter = (s: string | undefined): number | null => {
  if (s === undefined || !/^\d{1,20}$/.test(s)) return null;
  const n = Number(s);
  return Number.isSafeInteger(n) ? n : null;
};

/** PSI's `some ... total=N` (µs); null when the text is not PSI. */
export function parsePsiSomeTotal(text: string | null): number | null {
  return counter(text?.match(/^some\b[^\n]*\btotal=(\d+)/m)?.[1]);
}

/** /proc/PID/schedstat is "run_ns wait_ns timeslices": the wait (ns); null when the text is not that. */
export function parseSchedstatWait(text: string | null): number | null {
  const fields = text?.trim().split(/\s+/);
  return fields && fields.length >= 3 ? counter(fields[1]) : null;
}

/** Reads both counters now. */
export function sampleHostPressure(read: ProcReader, tMs: number): HostPressureSample {
  return {
    tMs,
    cpuSomeUs: parsePsiSomeTotal(read(PROC_PATHS.psiCpu)),
    selfWaitNs: parseSchedstatWait(read(PROC_PATHS.selfSchedstat)),
  };
}

/** A counter's share of the window between two readings; null when either is missing or it ran backwards. */
function share(a: number | null, b: number | null, perMs: number, windowMs: number): number | null {
  if (a === null || b === null || b < a || windowMs <= 0) return null;
  return Math.min(1, (b - a) / perMs / windowMs);
}

/** The host's CPU pressure over a level, from a reading at its start and one at its end. */
export function hostPressureBetween(a: HostPressureSample, b: HostPressureSample): HostPressure {
  const windowMs = b.tMs - a.tMs;
  return {
    windowMs,
    cpuSomeShare: share(a.cpuSomeUs, b.cpuSomeUs, 1_000, windowMs),
    selfWaitShare: share(a.selfWaitNs, b.selfWaitNs, 1_000_000, windowMs),
  };
}

/**
 * When the host was too busy for the client's timings: its measuring thread waited for a CPU this share of the
 * level (the direct evidence), or, where that is not readable, some task waited this share (PSI).
 */
const HOST_BUSY = { selfWaitShare: 0.05, cpuSomeShare: 0.25 } as const;

/** True when the host was busy (HOST_BUSY), false when it was not, null when nothing could be read. */
export function hostBusy(p: HostPressure | null | undefined): boolean | null {
  if (!p) return null;
  if (p.selfWaitShare !== null) return p.selfWaitShare >= HOST_BUSY.selfWaitShare;
  if (p.cpuSomeShare !== null) return p.cpuSomeShare >= HOST_BUSY.cpuSomeShare;
  return null;
}

/** The pressure figures in words: "this process waited for a CPU 12.0 % of the level, some task 64.0 % (PSI)". */
export function hostPressureText(p: HostPressure | null | undefined): string {
  if (!p || (p.selfWaitShare === null && p.cpuSomeShare === null))
    return `host CPU pressure unknown (no ${PROC_PATHS.psiCpu} here)`;
  const parts: string[] = [];
  if (p.selfWaitShare !== null)
    parts.push(`this process waited for a CPU ${fmtShare(p.selfWaitShare, 1)} of the level`);
  if (p.cpuSomeShare !== null) parts.push(`some task ${fmtShare(p.cpuSomeShare, 1)} (PSI)`);
  return parts.join(', ');
}
