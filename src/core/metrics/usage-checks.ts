import type { RequestRecord, UsageProblem } from '../../shared/request-record.js';
import type { CheckFact } from '../../shared/run-record.js';
import { fmtNum } from './format.js';

/** The impossible counts of one usage field over some requests: the commonest problem, how many, an example. */
export interface ImpossibleUsage {
  /** Stable code of the check that names it, e.g. 'impossible-completion-tokens'. */
  code: string;
  /** One line for people: which field, how many requests, what it said against what bounds it. */
  detail: string;
  facts: Record<string, CheckFact>;
}

const BOUND_TEXT: Record<UsageProblem['code'], (bound: number | undefined) => string> = {
  'not-a-count': () => 'which is no token count',
  'not-a-number': () => 'where a token count belongs',
  'above-max-tokens': (b) => `above the max_tokens ${fmtBound(b)} the request allowed`,
  'below-chunks': (b) => `while ${fmtBound(b)} token-bearing chunks streamed (each holds at least one token)`,
  'above-request-size': (b) => `more than the request's bytes allow (at most ${fmtBound(b)})`,
  'above-prompt-tokens': (b) => `above its prompt_tokens ${fmtBound(b)}`,
  'above-completion-tokens': (b) => `above its completion_tokens ${fmtBound(b)}`,
};

function fmtBound(bound: number | undefined): string {
  return bound === undefined ? '?' : fmtNum(bound);
}

function fmtValue(value: number | null): string {
  return value === null ? 'a non-finite number' : fmtNum(value);
}

/**
 * The requests among `records` whose server reported an impossible `field`, summarized for a check (null when none):
 * the commonest problem with its first example, and which figures were left out because of it.
 */
export function impossibleUsage(
  records: readonly RequestRecord[],
  field: UsageProblem['field'],
  leftOut: string,
): ImpossibleUsage | null {
  const problems = records
    .map((r) => r.usageProblems?.find((p) => p.field === field))
    .filter((p): p is UsageProblem => p !== undefined);
  if (problems.length === 0) return null;
  const byCode = new Map<UsageProblem['code'], UsageProblem[]>();
  for (const p of problems) byCode.set(p.code, [...(byCode.get(p.code) ?? []), p]);
  const [code, same] = [...byCode.entries()].sort((a, b) => b[1].length - a[1].length)[0]!;
  const example = same[0]!;
  const others = problems.length - same.length;
  return {
    code: `impossible-${field.replace(/_/g, '-')}`,
    detail:
      `the server's ${field} is impossible for ${problems.length}/${records.length} requests ` +
      `(e.g. ${example.sentAs ?? fmtValue(example.value)}, ${BOUND_TEXT[code](example.bound)}` +
      `${others > 0 ? `; ${others} more otherwise impossible` : ''}): ${leftOut}`,
    facts: {
      field,
      problem: code,
      requests: problems.length,
      of: records.length,
      value: example.value,
      bound: example.bound ?? null,
    },
  };
}
