import { fmtCounts } from '../../shared/format.js';
import type { RequestRecord } from '../../shared/request-record.js';
import { impossibleUsage } from '../metrics/usage-checks.js';
import { countBy, distinct, extent, okMeasured } from './helpers.js';
import { defineCheck } from './define.js';
import { judged, type Facts, type Judged } from './verdict.js';

/** output-length: every ok request produced exactly the requested tokens, by the server's count. */
export function outputLengthCheck(records: readonly RequestRecord[]): Judged {
  const ok = okMeasured(records);
  const counted = ok.filter((r) => r.nOutSource === 'server');
  const wrong = counted.filter((r) => r.nOut !== r.expectedOut);
  const facts: Facts = {
    requests: ok.length,
    serverCounted: counted.length,
    wrongRequests: wrong.length,
    expectedTokens: distinct((wrong.length > 0 ? wrong : ok).map((r) => r.expectedOut)).join('/'),
  };
  if (ok.length === 0) return judged('output-length', 'warn', 'no-completed-requests', facts);
  const impossible = impossibleUsage(ok, 'completion_tokens');
  if (impossible && wrong.length === 0) return judged('output-length', 'warn', impossible.code, impossible.facts);
  if (wrong.length > 0) {
    const got = extent(wrong.map((r) => r.nOut));
    return judged('output-length', 'fail', 'length-off', {
      ...facts,
      minTokens: got.min,
      maxTokens: got.max,
      finishReasons: fmtCounts(countBy(wrong, (r) => r.finishReason ?? 'none')),
    });
  }
  const estimated = ok.length - counted.length;
  if (estimated > 0) {
    const off = ok.filter((r) => r.nOutSource === 'estimated' && r.nOut !== r.expectedOut).length;
    return judged('output-length', 'warn', 'no-server-count', {
      ...facts,
      estimatedRequests: estimated,
      estimateDiffers: off,
    });
  }
  return judged('output-length', 'pass', 'exact', facts);
}

export const outputLength = defineCheck('output-length', {
  limits: {},
  // A constrained answer (--response-format, --tools) ends where its grammar does: its length is not asked.
  evaluate: (e) => (e.measured.some((r) => r.structured !== undefined) ? null : outputLengthCheck(e.measured)),
});
