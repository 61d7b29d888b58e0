import type { Check, CheckStatus } from './run-record.js';

/** How bad each status is: a fail outweighs a warning, a warning a pass. */
const SEVERITY: Record<CheckStatus, number> = { pass: 0, warn: 1, fail: 2 };

/** The worst status among checks ('pass' when there are none). */
export function worstCheck(checks: readonly Pick<Check, 'status'>[]): CheckStatus {
  return checks.reduce<CheckStatus>((w, c) => (SEVERITY[c.status] > SEVERITY[w] ? c.status : w), 'pass');
}

/** The ids of the checks that did not pass, apart by status: each status gets its own pill. */
export function checksByStatus(checks: readonly { id: string; status: CheckStatus }[]): {
  fail: string[];
  warn: string[];
} {
  return {
    fail: checks.filter((c) => c.status === 'fail').map((c) => c.id),
    warn: checks.filter((c) => c.status === 'warn').map((c) => c.id),
  };
}
