import type { Check, CheckFact, CheckId, CheckStatus } from '../../shared/run-record.js';
import { renderCheck } from './prose.js';

/** Facts of a verdict: the figures it rests on, by name. */
export type Facts = Record<string, CheckFact>;

/** A check result as this version writes it: every one carries its code and facts (only old run.json lack them). */
export type Judged = Check & { code: string; facts: Facts };

/** A check result from its parts; the prose is `detail`, the code and facts are what tools and tests read. */
export function verdict(id: CheckId, status: CheckStatus, code: string, facts: Facts, detail: string): Judged {
  return { id, status, detail, code, facts };
}

/** A check result whose sentence the prose renderer makes from its code and facts. */
export function judged(id: CheckId, status: CheckStatus, code: string, facts: Facts): Judged {
  return verdict(id, status, code, facts, renderCheck(id, code, facts));
}
