import { hostBusy } from '../../src/core/telemetry/host-pressure.js';
import type { Check, RunRecord } from '../../src/shared/run-record.js';

/**
 * Checks whose verdict depends on how busy this machine is, not on the code under test: the client's own lag, and
 * the spread of throughput between rounds of a simulator sharing the CPU with it. A starved CI machine may fail them.
 */
export const MACHINE_CHECKS: ReadonlySet<string> = new Set(['client', 'round-spread']);

/** A check as tests compare it: its id and code ("server/simulated"); the prose is for people, not for asserting. */
export function verdictOf(c: Check): string {
  return `${c.id}/${c.code ?? 'unrecorded'}`;
}

/** The run's failed checks that a busy machine cannot explain (what a test asserts empty instead of "exit 0"). */
export function failedBeyondMachine(record: RunRecord): string[] {
  return record.checks.filter((c) => c.status === 'fail' && !MACHINE_CHECKS.has(c.id)).map(verdictOf);
}

/** Exit status a run may end with when only machine checks can fail: 0, or 1 for a failed machine check. */
export function exitAgrees(status: number | null, record: RunRecord): boolean {
  const failed = record.checks.some((c) => c.status === 'fail');
  return failed ? status === 1 : status === 0;
}

/**
 * Streaming warnings about when tokens came, not how the stream was shaped: a stall, clumped reads, and ITL made of
 * events read together (a descheduled client reads several at once).
 */
const PACE_WARNINGS: ReadonlySet<string> = new Set(['stalled', 'clumped', 'itl-coalesced']);

/**
 * The checks among these that did not pass for a reason this machine cannot explain. Machine checks never count, and
 * neither do streaming warnings about the pace of arrival (a mid-stream stall, clumped reads): on a starved machine
 * the simulator and the client are descheduled for hundreds of ms, and every stream shows it. With `hostBusy` (the
 * level's own pressure reading said this client waited for a CPU) no streaming warning counts: a client descheduled
 * longer than its measured lag merges a short stream into one read, and a minority of whole responses warns. A
 * streaming failure, or a shape warning on a host that was not busy, always counts.
 */
export function unexplained(checks: readonly Check[], hostBusy = false): Check[] {
  return checks.filter(
    (c) =>
      c.status !== 'pass' &&
      !MACHINE_CHECKS.has(c.id) &&
      !(c.id === 'streaming' && c.status === 'warn' && (hostBusy || PACE_WARNINGS.has(c.code ?? ''))),
  );
}

/**
 * The record's checks that did not pass for a reason this machine cannot explain (see unexplained), as
 * "c=N id/code" per level and "id/code" for the run. A run-level check that combines its levels' (the same id,
 * without their codes) is judged by them.
 */
export function unexplainedInRun(record: RunRecord): string[] {
  const levelIds = new Set(record.levels.flatMap((l) => l.checks.map((c) => c.id)));
  const run = unexplained(record.checks.filter((c) => !levelIds.has(c.id))).map(verdictOf);
  const levels = record.levels.flatMap((l) =>
    unexplained(l.checks, hostBusy(l.hostPressure) === true).map((c) => `c=${l.concurrency} ${verdictOf(c)}`),
  );
  return [...run, ...levels];
}
