import type { Check, CheckFact, CheckId, CheckStatus } from '../../shared/run-record.js';
import { renderCheck } from './prose.js';

/** Facts of a verdict: the figures it rests on, by name. */
export type Facts = Record<string, CheckFact>;

/** A check result as this version writes it: every one carries its code and facts (only old run.json lack them). */
export type Judged = Check & { code: string; facts: Facts };

/** A check result whose sentence (`detail`) the prose renderer makes from its code and facts, which tools read. */
export function judged(id: CheckId, status: CheckStatus, code: string, facts: Facts): Judged {
  return { id, status, detail: renderCheck(id, code, facts), code, facts };
}
