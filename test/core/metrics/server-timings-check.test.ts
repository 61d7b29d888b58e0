import { describe, expect, it } from 'vitest';
import { SERVER_TIMING_LIMITS, tokenAgreementCheck } from '../../../src/core/checks/token-agreement.js';
import type { RequestRecord } from '../../../src/shared/request-record.js';
import { streamed } from './make-record.js';

/** A request the client saw with TTFT 100 ms and 8 chunks 10 ms apart (decode 70 ms), with the server's timings. */
const timed = (serverPromptMs: number, serverDecodeMs: number): RequestRecord =>
  streamed({ ttftMs: 100, gapMs: 10, chunks: 8 }, { serverPromptMs, serverDecodeMs });

const times = <T>(n: number, make: (i: number) => T): T[] => Array.from({ length: n }, (_, i) => make(i));

describe('token-agreement against the server’s own timings (llama.cpp)', () => {
  it('passes when the decode times agree and TTFT covers the prompt time, and says so', () => {
    const c = tokenAgreementCheck(times(10, () => timed(60, 72)));
    expect(c).toMatchObject({
      status: 'pass',
      code: 'agree',
      facts: { serverTimedRequests: 10, decodeDisagrees: 0, firstTokenTooSoon: 0 },
    });
  });

  it('lets TTFT exceed the prompt time by any amount (queueing for a slot, transport)', () => {
    expect(tokenAgreementCheck(times(10, () => timed(1, 70))).status).toBe('pass');
  });

  it('warns when the client decode time disagrees with predicted_ms beyond the limits', () => {
    // 70 ms seen by the client vs 200 ms by the server: more than 25 % and more than 50 ms apart.
    const c = tokenAgreementCheck(times(10, () => timed(60, 200)));
    // The token counts still agree: the warning is the timings'.
    expect(c).toMatchObject({
      status: 'warn',
      code: 'stream-problems',
      facts: { serverTimedRequests: 10, decodeDisagrees: 10, firstTokenTooSoon: 0, serverCounted: 10 },
    });
    expect(c.facts.differRequests).toBeUndefined();
  });

  it('tolerates a small absolute difference on short streams and a few outliers', () => {
    // 70 vs 115: 64 % apart but within the 50 ms slack.
    expect(tokenAgreementCheck(times(10, () => timed(60, 70 + SERVER_TIMING_LIMITS.slackMs - 5))).status).toBe('pass');
    // 1 request in 10 off (a pause on the client) does not warn; 2 do.
    const one = times(10, (i) => timed(60, i === 0 ? 400 : 70));
    expect(tokenAgreementCheck(one).status).toBe('pass');
    const two = times(10, (i) => timed(60, i < 2 ? 400 : 70));
    expect(tokenAgreementCheck(two).status).toBe('warn');
  });

  it('warns when a first token came sooner than the server’s own prompt time', () => {
    const c = tokenAgreementCheck([timed(60, 70), timed(300, 70)]);
    expect(c).toMatchObject({
      status: 'warn',
      code: 'stream-problems',
      facts: { serverTimedRequests: 2, firstTokenTooSoon: 1 },
    });
  });

  it('ignores requests without server timings', () => {
    const c = tokenAgreementCheck(times(4, () => streamed({ chunks: 8 })));
    expect(c.status).toBe('pass');
    expect(c.facts.serverTimedRequests).toBeUndefined();
  });
});
