import { checkDeclaration, type CheckId, type CheckScope } from '../../shared/check-catalog.js';
import type { LevelEvidence, RunEvidence } from './evidence.js';
import type { Judged } from './verdict.js';

/** The bounds a check judges by, by name (documented beside it in docs/checks.md). */
type Limits = Readonly<Record<string, number>>;

/** One check: its catalog entry, its limits and its rule; evaluate gives null where the check does not apply. */
export interface CheckDefinition<E> {
  id: CheckId;
  scope: CheckScope;
  title: string;
  /** What a pass guarantees (from the catalog). */
  guards: string;
  limits: Limits;
  evaluate(evidence: E): Judged | null;
}

/** A check that judges one level. */
export type LevelCheck = CheckDefinition<LevelEvidence>;
/** A check that judges the run as a whole. */
export type RunCheck = CheckDefinition<RunEvidence>;

function define<E>(
  id: CheckId,
  scope: CheckScope,
  rule: Pick<CheckDefinition<E>, 'limits' | 'evaluate'>,
): CheckDefinition<E> {
  const declared = checkDeclaration(id);
  if (declared?.scope !== scope)
    throw new Error(`check ${id} is declared for scope ${declared?.scope}, defined for ${scope}`);
  return { id, scope, title: declared.title, guards: declared.guards, ...rule };
}

/** A level check, its title and scope from the catalog. */
export function defineCheck(id: CheckId, rule: Pick<LevelCheck, 'limits' | 'evaluate'>): LevelCheck {
  return define(id, 'level', rule);
}

/** A run check, its title and scope from the catalog. */
export function defineRunCheck(id: CheckId, rule: Pick<RunCheck, 'limits' | 'evaluate'>): RunCheck {
  return define(id, 'run', rule);
}
