import type { Check, RunRecord } from '../../src/shared/run-record.js';

/**
 * Checks whose verdict depends on how busy this machine is, not on the code under test: the client's own lag, and
 * the spread of throughput between rounds of a simulator sharing the CPU with it. A starved CI machine may fail them.
 */
export const MACHINE_CHECKS: ReadonlySet<string> = new Set(['client', 'round-spread']);

/** The run's failed checks that a busy machine cannot explain (what a test asserts empty instead of "exit 0"). */
export function failedBeyondMachine(record: RunRecord): string[] {
  return record.checks
    .filter((c) => c.status === 'fail' && !MACHINE_CHECKS.has(c.id))
    .map((c) => `${c.id}: ${c.detail}`);
}

/** Exit status a run may end with when only machine checks can fail: 0, or 1 for a failed machine check. */
export function exitAgrees(status: number | null, record: RunRecord): boolean {
  const failed = record.checks.some((c) => c.status === 'fail');
  return failed ? status === 1 : status === 0;
}

/**
 * The checks among these that did not pass for a reason this machine cannot explain: machine checks never count, and
 * a streaming warning (a mid-stream stall, clumped reads) does not count where the client check itself did not pass,
 * since a starved client stalls every stream it reads. A streaming failure always counts.
 */
export function unexplained(checks: readonly Check[]): Check[] {
  const clientBusy = checks.some((c) => c.id === 'client' && c.status !== 'pass');
  return checks.filter(
    (c) =>
      c.status !== 'pass' && !MACHINE_CHECKS.has(c.id) && !(c.id === 'streaming' && c.status === 'warn' && clientBusy),
  );
}
