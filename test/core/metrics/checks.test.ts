import { describe, expect, it } from 'vitest';
import {
  clientCheck,
  combineChecks,
  errorsCheck,
  inputLengthCheck,
  outputLengthCheck,
  prefixCacheCheck,
  roundSpreadCheck,
  sampleSizeCheck,
  streamingCheck,
  streamingShape,
  tokenAgreementCheck,
  warmupCheck,
} from '../../../src/core/metrics/checks.js';
import { summarize } from '../../../src/core/metrics/percentiles.js';
import type { RequestRecord } from '../../../src/shared/request-record.js';
import { failed, makeRecord, streamed } from './make-record.js';

const times = <T>(n: number, make: (i: number) => T): T[] => Array.from({ length: n }, (_, i) => make(i));
const ok256 = (over: Partial<RequestRecord> = {}): RequestRecord =>
  streamed({ chunks: 256, gapMs: 10 }, { nIn: 512, expectedIn: 512, ...over });

describe('output-length', () => {
  it('passes when every request produced the requested tokens by server count', () => {
    const c = outputLengthCheck(times(48, () => ok256()));
    expect(c).toEqual({
      id: 'output-length',
      status: 'pass',
      detail: '48/48 requests produced exactly 256 tokens (server count)',
    });
  });

  it('fails on any mismatch, naming how many and the counts', () => {
    const records = [...times(36, () => ok256()), ...times(12, () => ok256({ nOut: 250, finishReason: 'stop' }))];
    const c = outputLengthCheck(records);
    expect(c.status).toBe('fail');
    expect(c.detail).toContain(
      '12/48 requests produced 250 tokens instead of 256 (server count; finish reason stop 12)',
    );
  });

  it('warns when counts are only estimated', () => {
    const c = outputLengthCheck(times(4, () => ok256({ nOutSource: 'estimated', chunkTokensSource: 'estimated' })));
    expect(c.status).toBe('warn');
    expect(c.detail).toContain('4/4 requests came without usage from the server');
    expect(c.detail).toContain('could not be verified');
  });

  it('ignores failed and warm-up requests', () => {
    const c = outputLengthCheck([ok256(), failed(0, 5, 'timeout'), ok256({ round: -1, warmup: true, nOut: 3 })]);
    expect(c.status).toBe('pass');
  });
});

describe('input-length', () => {
  it('passes, fails and warns on prompt tokens', () => {
    expect(inputLengthCheck(times(3, () => ok256())).status).toBe('pass');
    const wrong = inputLengthCheck([ok256(), ok256({ nIn: 510 }), ok256({ nIn: 511 })]);
    expect(wrong.status).toBe('fail');
    expect(wrong.detail).toBe('2/3 prompts had 510–511 tokens instead of 512 (server count)');
    const unknown = inputLengthCheck([ok256(), ok256({ nIn: null })]);
    expect(unknown.status).toBe('warn');
    expect(unknown.detail).toContain('no prompt_tokens for 1/2 requests');
  });
});

describe('streaming', () => {
  it('passes a token-by-token stream', () => {
    const c = streamingCheck(times(10, () => streamed({ ttftMs: 100, gapMs: 20, chunks: 50 })));
    expect(c.status).toBe('pass');
    expect(c.detail).toContain('median 50 chunks per request');
  });

  it('passes a diffusion model sending 8 blocks of 32 tokens over time', () => {
    const blocks = times(10, () => streamed({ ttftMs: 300, gapMs: 64, chunks: 8, tokensPerChunk: 32, tailMs: 2 }));
    expect(streamingShape(blocks[0]!)).toBe('streamed');
    expect(streamingCheck(blocks).status).toBe('pass');
  });

  it('fails when most requests arrive in a single chunk', () => {
    const single = times(8, () => streamed({ ttftMs: 900, chunks: 1, tokensPerChunk: 256, tailMs: 1 }));
    const c = streamingCheck([...single, ...times(2, () => streamed({ chunks: 30 }))]);
    expect(c.status).toBe('fail');
    expect(c.detail).toContain(
      '8/10 multi-token requests arrived in one burst (8 in a single chunk, 0 buffered to the end)',
    );
  });

  it('fails a buffered stream: every chunk within the last 2 % of E2E after a long TTFT', () => {
    // TTFT 980 of E2E 1000; 256 chunks within 10 ms (1 % of E2E)
    const buffered = times(5, () => streamed({ ttftMs: 980, gapMs: 10 / 255, chunks: 256, tailMs: 10 }));
    expect(streamingShape(buffered[0]!)).toBe('buffered');
    const c = streamingCheck(buffered);
    expect(c.status).toBe('fail');
    expect(c.detail).toContain(
      '5/5 multi-token requests arrived in one burst (0 in a single chunk, 5 buffered to the end)',
    );
  });

  it('warns when a minority of requests burst', () => {
    const c = streamingCheck([streamed({ chunks: 1, tokensPerChunk: 4 }), ...times(3, () => streamed({ chunks: 30 }))]);
    expect(c.status).toBe('warn');
    expect(c.detail).toContain('1/4');
  });

  it('warns when there is nothing multi-token to judge', () => {
    expect(streamingCheck([streamed({ chunks: 1 })]).status).toBe('warn');
  });
});

describe('warmup', () => {
  it('passes when warm-up requests were discarded, warns when off', () => {
    expect(warmupCheck(4)).toEqual({
      id: 'warmup',
      status: 'pass',
      detail: '4 warm-up requests sent and discarded before measuring',
    });
    expect(warmupCheck(0).status).toBe('warn');
    expect(warmupCheck(0).detail).toContain('warm-up was off');
  });
});

describe('round-spread', () => {
  it('passes at CV <= 15 %', () => {
    // [90, 100, 110] -> CV 0.1
    expect(roundSpreadCheck([90, 100, 110])).toEqual({
      id: 'round-spread',
      status: 'pass',
      detail: 'CV 10.0 % over 3 rounds (90, 100, 110 tok/s)',
    });
  });

  it('fails above 15 %, giving the CV and per-round figures', () => {
    // [80, 100, 120] -> std 20, CV 0.2
    const c = roundSpreadCheck([80, 100, 120]);
    expect(c.status).toBe('fail');
    expect(c.detail).toContain('CV 20.0 % over 3 rounds (80, 100, 120 tok/s) exceeds 15.0 %');
  });

  it('warns with fewer than 2 rounds', () => {
    expect(roundSpreadCheck([1234.4]).status).toBe('warn');
    expect(roundSpreadCheck([1234.4]).detail).toContain('1 round (1234 tok/s)');
  });
});

describe('sample-size', () => {
  it('passes when p95 and p99 both have CIs', () => {
    expect(sampleSizeCheck(summarize(times(299, (i) => i))).status).toBe('pass');
  });

  it('names the percentiles lacking samples and the n they need', () => {
    const c = sampleSizeCheck(summarize(times(48, (i) => i)));
    expect(c.status).toBe('warn');
    expect(c.detail).toContain('48 TTFT samples');
    expect(c.detail).toContain('p95 needs 59, p99 needs 299');
    const onlyP99 = sampleSizeCheck(summarize(times(100, (i) => i)));
    expect(onlyP99.detail).toContain('(p99 needs 299)');
  });
});

describe('errors', () => {
  it('passes with no failures', () => {
    expect(errorsCheck(times(10, () => ok256()))).toEqual({
      id: 'errors',
      status: 'pass',
      detail: '0/10 requests failed',
    });
  });

  it('warns at <= 1 % and fails above, with counts by kind', () => {
    const warn = errorsCheck([...times(199, () => ok256()), failed(0, 5, 'timeout')]);
    expect(warn.status).toBe('warn');
    expect(warn.detail).toBe('1/200 requests failed (0.5 %): timeout 1');
    const fail = errorsCheck([
      ...times(43, () => ok256()),
      ...times(3, () => failed(0, 5, 'http-500')),
      ...times(2, () => failed(0, 5, 'timeout')),
    ]);
    expect(fail.status).toBe('fail');
    expect(fail.detail).toBe('5/48 requests failed (10.4 %): http-500 3, timeout 2');
  });
});

describe('prefix-cache', () => {
  it('passes with unique prompts and no (or unknown) hits', () => {
    expect(prefixCacheCheck({ uniquePrefix: true }).status).toBe('pass');
    expect(prefixCacheCheck({ uniquePrefix: true, prefixCacheHitsDelta: 0 }).status).toBe('pass');
  });

  it('warns on the cached case and on hits despite unique prompts', () => {
    const off = prefixCacheCheck({ uniquePrefix: false });
    expect(off.status).toBe('warn');
    expect(off.detail).toContain('measuring the cached case');
    const hits = prefixCacheCheck({ uniquePrefix: true, prefixCacheHitsDelta: 1200 });
    expect(hits.status).toBe('warn');
    expect(hits.detail).toContain('1200 prefix-cache hits despite unique prompts');
  });
});

describe('client', () => {
  it('passes small lags, warns above 20 / 10 ms, fails above 100 ms, warns when unknown', () => {
    expect(clientCheck({ loopLagP99Ms: 3, scheduleLagP99Ms: null }).status).toBe('pass');
    expect(clientCheck({ loopLagP99Ms: 3, scheduleLagP99Ms: 2 }).status).toBe('pass');
    expect(clientCheck({ loopLagP99Ms: 25, scheduleLagP99Ms: null }).status).toBe('warn');
    const sched = clientCheck({ loopLagP99Ms: 3, scheduleLagP99Ms: 12 });
    expect(sched.status).toBe('warn');
    expect(sched.detail).toContain('schedule lag p99 12 ms');
    const bad = clientCheck({ loopLagP99Ms: 150, scheduleLagP99Ms: null });
    expect(bad.status).toBe('fail');
    expect(bad.detail).toContain('event-loop lag p99 150 ms');
    expect(clientCheck({ loopLagP99Ms: 5, scheduleLagP99Ms: 101 }).status).toBe('fail');
    expect(clientCheck({ loopLagP99Ms: null, scheduleLagP99Ms: null }).status).toBe('warn');
  });
});

describe('token-agreement', () => {
  it('passes when per-chunk usage sums to the server count', () => {
    const c = tokenAgreementCheck(times(4, () => streamed({ chunks: 8, tokensPerChunk: 32 })));
    expect(c.status).toBe('pass');
    expect(c.detail).toContain('all 4 requests (per-chunk usage)');
  });

  it('passes when one chunk per token matches the server count', () => {
    const c = tokenAgreementCheck([streamed({ chunks: 16 }, { chunkTokensSource: 'estimated' })]);
    expect(c.status).toBe('pass');
  });

  it('warns when chunks are not tokens: 8 blocks counted 1 per chunk vs 256 tokens', () => {
    const blocks = times(4, () =>
      streamed({ chunks: 8, tokensPerChunk: 1 }, { chunkTokensSource: 'estimated', nOut: 256, expectedOut: 256 }),
    );
    const c = tokenAgreementCheck(blocks);
    expect(c.status).toBe('warn');
    // 8 / 256 = 0.03125
    expect(c.detail).toContain('4/4 requests: client counted 8 vs server 256 tokens (median ratio 0.0313)');
    expect(c.detail).toContain('chunks are not tokens');
  });

  it('warns when the server gave no usage to compare', () => {
    const c = tokenAgreementCheck([
      streamed({ chunks: 4 }, { nOutSource: 'estimated', chunkTokensSource: 'estimated' }),
    ]);
    expect(c.status).toBe('warn');
    expect(c.detail).toContain('no token usage');
  });
});

describe('combineChecks', () => {
  it('takes the worst status per id and names the levels', () => {
    const levels = [
      [warmupCheck(2), roundSpreadCheck([100, 101])],
      [warmupCheck(2), roundSpreadCheck([80, 100, 120])],
      [warmupCheck(0), roundSpreadCheck([100])],
    ];
    const run = combineChecks(levels, ['c=1', 'c=2', 'c=4']);
    expect(run.map((c) => [c.id, c.status])).toEqual([
      ['warmup', 'warn'],
      ['round-spread', 'fail'],
    ]);
    expect(run[0]!.detail).toMatch(/^warn at c=4 \(c=4: warm-up was off/);
    expect(run[1]!.detail).toMatch(/^fail at c=2; warn at c=4 \(c=2: CV 20\.0 %/);
    const allPass = combineChecks([[warmupCheck(1)], [warmupCheck(1)]]);
    expect(allPass).toEqual([{ id: 'warmup', status: 'pass', detail: 'pass at all 2 levels' }]);
    expect(combineChecks([[errorsCheck([makeRecord()])]])[0]!.detail).toBe('0/1 requests failed');
  });
});
