import type { RequestRecord } from '../../shared/request-record.js';
import { fmtRange } from '../metrics/format.js';
import { impossibleUsage } from '../metrics/usage-checks.js';
import { distinct, fmtLengths, okMeasured } from './helpers.js';
import { defineCheck } from './define.js';
import { verdict, type Judged } from './verdict.js';

/**
 * input-length: every ok request's prompt had the requested tokens, by the server's usage.prompt_tokens.
 * `calibration`: why prompt calibration could not make them exact, when it said so (named in the failure).
 */
export function inputLengthCheck(records: readonly RequestRecord[], calibration?: string): Judged {
  const ok = okMeasured(records);
  if (ok.length === 0)
    return verdict(
      'input-length',
      'warn',
      'no-completed-requests',
      { requests: 0 },
      'no completed requests: input length could not be verified',
    );
  const known = ok.filter((r) => r.nIn !== null && r.expectedInSource === undefined);
  const wrong = known.filter((r) => r.nIn !== r.expectedIn);
  const impossible = impossibleUsage(
    ok,
    'prompt_tokens',
    'input length not verified, and total tok/s is left out (it would rest on them)',
  );
  if (impossible) return verdict('input-length', 'fail', impossible.code, impossible.facts, impossible.detail);
  if (wrong.length > 0) {
    const facts = { wrongRequests: wrong.length, requests: ok.length, calibration: calibration ?? null };
    return verdict(
      'input-length',
      'fail',
      calibration ? 'calibration-inexact' : 'prompt-length-off',
      facts,
      `${wrong.length}/${ok.length} prompts had ${fmtRange(wrong.map((r) => r.nIn ?? 0))} tokens instead of ` +
        `${fmtLengths(wrong.map((r) => r.expectedIn))} (server count)${calibration ? `: ${calibration}` : ''}`,
    );
  }
  // Multi-turn without a tokenizer (or its count failed): a later turn's history was not counted, nothing to verify.
  const uncountedRecords = ok.filter((r) => r.expectedInSource !== undefined);
  const uncounted = uncountedRecords.length;
  if (uncounted > 0) {
    const multiTurn = uncountedRecords.every((r) => r.workload?.turn !== undefined);
    return verdict(
      'input-length',
      'warn',
      'not-counted-ahead',
      { uncountedRequests: uncounted, requests: ok.length, multiTurn },
      `${uncounted}/${ok.length} ${multiTurn ? 'multi-turn prompts' : 'prompts'} could not be counted ahead ` +
        "(the server's tokenizer gave no exact count: it has none, or the count failed): their input length is the server's own count, not verified",
    );
  }
  const unknown = ok.length - known.length;
  if (unknown > 0) {
    return verdict(
      'input-length',
      'warn',
      'no-prompt-usage',
      { unreportedRequests: unknown, requests: ok.length },
      `the server reported no prompt_tokens for ${unknown}/${ok.length} requests: input length not verified, ` +
        `and total tok/s counts the requested ${distinct(ok.map((r) => r.expectedIn)).join('/')} for them`,
    );
  }
  return verdict(
    'input-length',
    'pass',
    'exact',
    { requests: ok.length },
    `${ok.length}/${ok.length} prompts had exactly ${fmtLengths(ok.map((r) => r.expectedIn))} tokens (server count)`,
  );
}

export const inputLength = defineCheck('input-length', {
  limits: {},
  evaluate: (e) => inputLengthCheck(e.measured, e.calibration ?? undefined),
});
