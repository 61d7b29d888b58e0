import { worstStatus } from '../../shared/check-status.js';
import type { Check, CheckId, CheckStatus } from '../../shared/run-record.js';
import type { Facts } from './verdict.js';

/** The roll-up of one check over the levels: the worst level's code and facts, and which levels said what. */
function rollUp(id: CheckId, list: ReadonlyArray<{ level: string; check: Check }>): Check {
  const status = worstStatus(list.map((e) => e.check.status));
  const worst = list.find((e) => e.check.status === status)!;
  const at = (s: CheckStatus): string[] => list.filter((e) => e.check.status === s).map((e) => e.level);
  const facts: Facts = {
    ...worst.check.facts,
    levels: list.length,
    worstLevel: worst.level,
    failLevels: at('fail').join(', '),
    warnLevels: at('warn').join(', '),
  };
  const code = worst.check.code ?? 'unrecorded';
  if (status === 'pass') {
    const detail = list.length === 1 ? worst.check.detail : `pass at all ${list.length} levels`;
    return { id, status, detail, code, facts };
  }
  const parts = [`${status} at ${at(status).join(', ')}`];
  if (status === 'fail' && at('warn').length > 0) parts.push(`warn at ${at('warn').join(', ')}`);
  return { id, status, detail: `${parts.join('; ')} (${worst.level}: ${worst.check.detail})`, code, facts };
}

/**
 * Run-level checks from the levels': per id the worst status over levels, with the worst level's code and facts and
 * the levels at each non-pass status, the detail quoting the first worst level's. levelLabels (e.g. "c=8") default
 * to "level 1", "level 2", ...
 */
export function combineChecks(levelsChecks: readonly (readonly Check[])[], levelLabels?: readonly string[]): Check[] {
  const byId = new Map<CheckId, Array<{ level: string; check: Check }>>();
  levelsChecks.forEach((checks, i) => {
    const level = levelLabels?.[i] ?? `level ${i + 1}`;
    for (const c of checks) byId.set(c.id, [...(byId.get(c.id) ?? []), { level, check: c }]);
  });
  return [...byId].map(([id, list]) => rollUp(id, list));
}
