import type { Check, CheckStatus } from './run-record.js';

/** Order of the statuses: a fail outweighs a warn, which outweighs a pass. */
export const STATUS_SEVERITY: Readonly<Record<CheckStatus, number>> = { pass: 0, warn: 1, fail: 2 };

/** The statuses worst first, as a report groups its checks. */
export const STATUSES_WORST_FIRST: readonly CheckStatus[] = ['fail', 'warn', 'pass'];

/** The worst of some statuses (fail > warn > pass); pass for none. */
export function worstStatus(statuses: readonly CheckStatus[]): CheckStatus {
  return statuses.reduce<CheckStatus>((w, s) => (STATUS_SEVERITY[s] > STATUS_SEVERITY[w] ? s : w), 'pass');
}

/** The worst status among checks ('pass' when there are none). */
export function worstCheck(checks: readonly Pick<Check, 'status'>[]): CheckStatus {
  return worstStatus(checks.map((c) => c.status));
}

/** Items grouped by their status, every status present (empty lists included), in input order within each. */
export function groupByStatus<T extends { status: CheckStatus }>(items: readonly T[]): Record<CheckStatus, T[]> {
  const groups: Record<CheckStatus, T[]> = { fail: [], warn: [], pass: [] };
  for (const item of items) groups[item.status].push(item);
  return groups;
}

/** The ids of the checks that did not pass, apart by status: each status gets its own pill. */
export function checksByStatus(checks: readonly { id: string; status: CheckStatus }[]): {
  fail: string[];
  warn: string[];
} {
  const groups = groupByStatus(checks);
  return { fail: groups.fail.map((c) => c.id), warn: groups.warn.map((c) => c.id) };
}
