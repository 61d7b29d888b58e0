import type { RequestRecord } from '../../shared/request-record.js';
import { impossibleUsage } from '../metrics/usage-checks.js';
import { distinct, extent, fmtLengths, okMeasured } from './helpers.js';
import { defineCheck } from './define.js';
import { judged, type Judged } from './verdict.js';

/**
 * input-length: every ok request's prompt had the requested tokens, by the server's usage.prompt_tokens.
 * `calibration`: why prompt calibration could not make them exact, when it said so (named in the failure).
 */
export function inputLengthCheck(records: readonly RequestRecord[], calibration?: string): Judged {
  const ok = okMeasured(records);
  if (ok.length === 0) return judged('input-length', 'warn', 'no-completed-requests', { requests: 0 });
  const known = ok.filter((r) => r.nIn !== null && r.expectedInSource === undefined);
  const wrong = known.filter((r) => r.nIn !== r.expectedIn);
  const impossible = impossibleUsage(ok, 'prompt_tokens');
  if (impossible) return judged('input-length', 'fail', impossible.code, impossible.facts);
  if (wrong.length > 0) {
    const got = extent(wrong.map((r) => r.nIn ?? 0));
    return judged('input-length', 'fail', calibration ? 'calibration-inexact' : 'prompt-length-off', {
      wrongRequests: wrong.length,
      requests: ok.length,
      calibration: calibration ?? null,
      minTokens: got.min,
      maxTokens: got.max,
      expectedTokens: fmtLengths(wrong.map((r) => r.expectedIn)),
    });
  }
  // Multi-turn without a tokenizer (or its count failed): a later turn's history was not counted, nothing to verify.
  const uncountedRecords = ok.filter((r) => r.expectedInSource !== undefined);
  if (uncountedRecords.length > 0) {
    return judged('input-length', 'warn', 'not-counted-ahead', {
      uncountedRequests: uncountedRecords.length,
      requests: ok.length,
      multiTurn: uncountedRecords.every((r) => r.workload?.turn !== undefined),
    });
  }
  const unknown = ok.length - known.length;
  if (unknown > 0) {
    return judged('input-length', 'warn', 'no-prompt-usage', {
      unreportedRequests: unknown,
      requests: ok.length,
      expectedTokens: distinct(ok.map((r) => r.expectedIn)).join('/'),
    });
  }
  return judged('input-length', 'pass', 'exact', {
    requests: ok.length,
    expectedTokens: fmtLengths(ok.map((r) => r.expectedIn)),
  });
}

export const inputLength = defineCheck('input-length', {
  limits: {},
  evaluate: (e) => inputLengthCheck(e.measured, e.calibration ?? undefined),
});
