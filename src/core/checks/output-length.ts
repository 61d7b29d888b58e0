import type { RequestRecord } from '../../shared/request-record.js';
import { fmtCounts, fmtRange } from '../metrics/format.js';
import { impossibleUsage } from '../metrics/usage-checks.js';
import { countBy, distinct, okMeasured } from './helpers.js';
import { defineCheck } from './define.js';
import { verdict, type Judged } from './verdict.js';

/** output-length: every ok request produced exactly the requested tokens, by the server's count. */
export function outputLengthCheck(records: readonly RequestRecord[]): Judged {
  const ok = okMeasured(records);
  const counted = ok.filter((r) => r.nOutSource === 'server');
  const wrong = counted.filter((r) => r.nOut !== r.expectedOut);
  const facts = { requests: ok.length, serverCounted: counted.length, wrongRequests: wrong.length };
  if (ok.length === 0)
    return verdict(
      'output-length',
      'warn',
      'no-completed-requests',
      facts,
      'no completed requests: output length could not be verified',
    );
  const impossible = impossibleUsage(ok, 'completion_tokens', 'output length not verified for them');
  if (impossible && wrong.length === 0) {
    return verdict('output-length', 'warn', impossible.code, impossible.facts, impossible.detail);
  }
  if (wrong.length > 0) {
    const reasons = countBy(wrong, (r) => r.finishReason ?? 'none');
    const got = wrong.map((r) => r.nOut);
    return verdict(
      'output-length',
      'fail',
      'length-off',
      { ...facts, minTokens: Math.min(...got), maxTokens: Math.max(...got), finishReasons: fmtCounts(reasons) },
      `${wrong.length}/${ok.length} requests produced ${fmtRange(got)} tokens instead of ` +
        `${distinct(wrong.map((r) => r.expectedOut)).join('/')} (server count; finish reason ${fmtCounts(reasons)}): ` +
        'latency and throughput are not for the requested length',
    );
  }
  const estimated = ok.length - counted.length;
  if (estimated > 0) {
    const off = ok.filter((r) => r.nOutSource === 'estimated' && r.nOut !== r.expectedOut).length;
    return verdict(
      'output-length',
      'warn',
      'no-server-count',
      { ...facts, estimatedRequests: estimated, estimateDiffers: off },
      `${estimated}/${ok.length} requests came without usage from the server, so their output length could not be ` +
        `verified (chunk-count estimate${off > 0 ? `, which differs from the request for ${off}` : ''})`,
    );
  }
  return verdict(
    'output-length',
    'pass',
    'exact',
    facts,
    `${ok.length}/${ok.length} requests produced exactly ${distinct(ok.map((r) => r.expectedOut)).join('/')} tokens (server count)`,
  );
}

export const outputLength = defineCheck('output-length', {
  limits: {},
  evaluate: (e) => outputLengthCheck(e.measured),
});
