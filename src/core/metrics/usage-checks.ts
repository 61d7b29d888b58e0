import type { RequestRecord, UsageProblem } from '../../shared/request-record.js';
import type { CheckFact } from '../../shared/run-record.js';

/** The impossible counts of one usage field over some requests: the commonest problem, how many, an example. */
export interface ImpossibleUsage {
  /** Stable code of the check that names it, e.g. 'impossible-completion-tokens'. */
  code: string;
  /** Which field, how many requests, its first example against its bound (worded by src/core/checks/usage-prose.ts). */
  facts: Record<string, CheckFact>;
}

/**
 * The requests among `records` whose server reported an impossible `field`, summarized for a check (null when none):
 * the commonest problem with its first example, and how many more were otherwise impossible.
 */
export function impossibleUsage(
  records: readonly RequestRecord[],
  field: UsageProblem['field'],
): ImpossibleUsage | null {
  const problems = records
    .map((r) => r.usageProblems?.find((p) => p.field === field))
    .filter((p): p is UsageProblem => p !== undefined);
  if (problems.length === 0) return null;
  const byCode = new Map<UsageProblem['code'], UsageProblem[]>();
  for (const p of problems) byCode.set(p.code, [...(byCode.get(p.code) ?? []), p]);
  const [code, same] = [...byCode.entries()].sort((a, b) => b[1].length - a[1].length)[0]!;
  const example = same[0]!;
  return {
    code: `impossible-${field.replace(/_/g, '-')}`,
    facts: {
      field,
      problem: code,
      requests: problems.length,
      of: records.length,
      value: example.value,
      ...(example.sentAs !== undefined ? { sentAs: example.sentAs } : {}),
      bound: example.bound ?? null,
      otherProblems: problems.length - same.length,
    },
  };
}
