import { fmtNumber } from '../../shared/format.js';
import type { UsageProblem } from '../../shared/request-record.js';
import type { CheckFact } from '../../shared/run-record.js';
import type { Facts } from './verdict.js';

// The sentence of an impossible usage count (impossibleUsage in src/core/metrics/usage-checks.ts), from its facts.

const BOUND_TEXT: Record<UsageProblem['code'], (bound: string) => string> = {
  'not-a-count': () => 'which is no token count',
  'not-a-number': () => 'where a token count belongs',
  'above-max-tokens': (b) => `above the max_tokens ${b} the request allowed`,
  'below-chunks': (b) => `while ${b} token-bearing chunks streamed (each holds at least one token)`,
  'above-request-size': (b) => `more than the request's bytes allow (at most ${b})`,
  'above-prompt-tokens': (b) => `above its prompt_tokens ${b}`,
  'above-completion-tokens': (b) => `above its completion_tokens ${b}`,
};

const fmtBound = (bound: CheckFact | undefined): string => (typeof bound === 'number' ? fmtNumber(bound) : '?');
const fmtValue = (value: CheckFact | undefined): string =>
  typeof value === 'number' ? fmtNumber(value) : 'a non-finite number';

/** "the server's FIELD is impossible for N/M requests (e.g. VALUE, BOUND): LEFT OUT", `leftOut` being the check's. */
export const impossibleUsageText =
  (leftOut: string) =>
  (f: Facts): string => {
    const others = f.otherProblems as number;
    const bound = BOUND_TEXT[f.problem as UsageProblem['code']]?.(fmtBound(f.bound)) ?? String(f.problem);
    return (
      `the server's ${String(f.field)} is impossible for ${String(f.requests)}/${String(f.of)} requests ` +
      `(e.g. ${typeof f.sentAs === 'string' ? f.sentAs : fmtValue(f.value)}, ${bound}${others > 0 ? `; ${others} more otherwise impossible` : ''}): ${leftOut}`
    );
  };
