import type { RequestRecord } from '../../shared/request-record.js';
import { fmtCounts } from '../../shared/format.js';
import { defineCheck } from './define.js';
import { countBy, okMeasured } from './helpers.js';
import { judged, type Judged } from './verdict.js';

/**
 * structured-output: every ok measured answer was what --response-format or --tools asked (each record's verdict,
 * made by the client as the answer came: structured-validate.ts). None valid means the server ignored the
 * constraint (a silent fallback to free text): the level's figures are then of another workload. Null when the run
 * asked for no structured output.
 */
export function structuredOutputCheck(records: readonly RequestRecord[], asked: string): Judged | null {
  const answers = okMeasured(records).filter((r) => r.structured !== undefined);
  if (answers.length === 0) return null;
  const invalid = answers.filter((r) => !r.structured?.valid);
  const toolCalls = answers.reduce((a, r) => a + (r.structured?.toolCalls ?? 0), 0);
  const facts = { asked, answers: answers.length, invalid: invalid.length, toolCalls };
  if (invalid.length === 0) return judged('structured-output', 'pass', 'all-valid', facts);
  const problems = fmtCounts(countBy(invalid, (r) => r.structured?.problem ?? 'unknown'));
  const example = invalid[0]?.structured?.detail ?? '';
  const failed = { ...facts, share: invalid.length / answers.length, problems, example };
  return judged('structured-output', 'fail', invalid.length === answers.length ? 'ignored' : 'invalid', failed);
}

export const structuredOutput = defineCheck('structured-output', {
  limits: {},
  evaluate: (e) => (e.structuredAsk ? structuredOutputCheck(e.measured, e.structuredAsk) : null),
});
