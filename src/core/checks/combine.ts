import { worstStatus } from '../../shared/check-status.js';
import type { Check, CheckId, CheckStatus } from '../../shared/run-record.js';
import type { Facts } from './verdict.js';

/** One level's verdict of a check, with the level's title. */
export interface LevelVerdict {
  level: string;
  check: Check;
}

/** Which levels said what for one check: the worst status, the first level at it, and the levels at each status. */
export interface LevelSpread {
  status: CheckStatus;
  worst: LevelVerdict;
  at: (status: CheckStatus) => string[];
}

/** The spread of one check over its levels' verdicts (at least one). */
export function levelSpread(list: readonly LevelVerdict[]): LevelSpread {
  const status = worstStatus(list.map((e) => e.check.status));
  const worst = list.find((e) => e.check.status === status)!;
  return { status, worst, at: (s) => list.filter((e) => e.check.status === s).map((e) => e.level) };
}

/** The levels a check did not pass at: "c=1, c=4", and after a failure "; warn at c=8" for the ones it warned at. */
export function spreadLevelsText(s: LevelSpread): string {
  const warned = s.status === 'fail' && s.at('warn').length > 0 ? `; warn at ${s.at('warn').join(', ')}` : '';
  return `${s.at(s.status).join(', ')}${warned}`;
}

/** The roll-up of one check over the levels: the worst level's code and facts, and which levels said what. */
function rollUp(id: CheckId, list: readonly LevelVerdict[]): Check {
  const spread = levelSpread(list);
  const { status, worst, at } = spread;
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
  return {
    id,
    status,
    detail: `${status} at ${spreadLevelsText(spread)} (${worst.level}: ${worst.check.detail})`,
    code,
    facts,
  };
}

/**
 * Run-level checks from the levels': per id the worst status over levels, with the worst level's code and facts and
 * the levels at each non-pass status, the detail quoting the first worst level's. levelLabels (e.g. "c=8") default
 * to "level 1", "level 2", ...
 */
export function combineChecks(levelsChecks: readonly (readonly Check[])[], levelLabels?: readonly string[]): Check[] {
  const byId = new Map<CheckId, LevelVerdict[]>();
  levelsChecks.forEach((checks, i) => {
    const level = levelLabels?.[i] ?? `level ${i + 1}`;
    for (const c of checks) byId.set(c.id, [...(byId.get(c.id) ?? []), { level, check: c }]);
  });
  return [...byId].map(([id, list]) => rollUp(id, list));
}
