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
  streamTiming,
  tokenAgreementCheck,
  warmupCheck,
} from '../../../src/core/metrics/checks.js';
import { summarize } from '../../../src/core/metrics/percentiles.js';
import type { RequestRecord } from '../../../src/shared/request-record.js';
import { failed, makeRecord, streamed } from './make-record.js';

const times = <T>(n: number, make: (i: number) => T): T[] => Array.from({ length: n }, (_, i) => make(i));
const warmOk = (): RequestRecord => streamed({ chunks: 4 }, { round: -1, warmup: true });
const warmFailed = (kind = 'http-503'): RequestRecord => failed(0, 5, kind, { round: -1, warmup: true });
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
    expect(streamTiming(blocks[0]!, { clientHoldMs: 20 }).shape).toBe('streamed');
    expect(streamingCheck(blocks).status).toBe('pass');
  });

  it('warns when a request pauses mid-stream far longer than the typical chunk gap', () => {
    const stalled = streamed({ ttftMs: 100, gapMs: 10, chunks: 40 });
    // Shift the second half of the chunks by a 300 ms stall.
    stalled.chunks = stalled.chunks.map(([t, n], i) => [i >= 20 ? t + 300 : t, n]);
    stalled.endMs = (stalled.endMs as number) + 300;
    const c = streamingCheck([...times(9, () => streamed({ ttftMs: 100, gapMs: 10, chunks: 40 })), stalled]);
    expect(c.status).toBe('warn');
    expect(c.code).toBe('stalled');
    expect(c.detail).toBe(
      '1/10 requests paused mid-stream for up to 310 ms (median chunk gap 10 ms): the server stalled (a long prefill of other requests, a preemption) or the network did; it inflates E2E and TPOT',
    );
  });

  it('names this client among the causes of a stall when its own event loop lagged past its limit', () => {
    const stalled = streamed({ ttftMs: 100, gapMs: 10, chunks: 40 });
    stalled.chunks = stalled.chunks.map(([t, n], i) => [i >= 20 ? t + 300 : t, n]);
    stalled.endMs = (stalled.endMs as number) + 300;
    const records = [...times(9, () => streamed({ ttftMs: 100, gapMs: 10, chunks: 40 })), stalled];
    expect(streamingCheck(records, 5).detail).toContain('the server stalled');
    const c = streamingCheck(records, 250);
    expect(c.status).toBe('warn');
    expect(c.detail).toContain('the server, the network or this client stalled (its event loop lagged 250 ms at p99)');
  });

  it('warns, not fails, when the whole output came in one chunk: streaming cannot be judged', () => {
    // A block-diffusion model whose one block covers the 256 tokens, or a server that does not stream.
    const single = times(8, () => streamed({ ttftMs: 900, chunks: 1, tokensPerChunk: 256, tailMs: 1 }));
    const all = streamingCheck(single);
    expect(all.status).toBe('warn');
    expect(all.code).toBe('single-chunk');
    expect(all.detail).toMatch(/^cannot judge streaming: the whole output came in one chunk \(a block-diffusion/);
    // Most in one chunk, the rest streamed: still nothing shows the buffered shape, so still a warning.
    const c = streamingCheck([...single, ...times(2, () => streamed({ chunks: 30 }))]);
    expect(c.status).toBe('warn');
    expect(c.detail).toContain('cannot judge streaming: for 8/10 multi-token requests the whole output came in one');
    expect(c.detail).toContain('the other 2 streamed');
  });

  it('fails single-chunk requests when others show the buffered shape', () => {
    const single = times(3, () => streamed({ ttftMs: 900, chunks: 1, tokensPerChunk: 256, tailMs: 1 }));
    const buffered = times(2, () => streamed({ ttftMs: 990, gapMs: 0, chunks: 256, tailMs: 10 }));
    const streamedOk = times(2, () => streamed({ chunks: 30 }));
    const c = streamingCheck([...single, ...buffered, ...streamedOk]);
    expect(c.status).toBe('fail');
    expect(c.code).toBe('buffered-whole');
    expect(c.facts).toMatchObject({ requests: 7, singleChunkRequests: 3, bufferedWholeRequests: 2 });
  });

  it('fails a buffered stream: every chunk in one network read after a long TTFT', () => {
    // TTFT 990 of E2E 1000; 256 chunks sharing one read's timestamp: 255 tokens in no time, which no decoder makes
    // (test/core/metrics/streaming-verdict.test.ts has the proxies, and the fast servers that are not one)
    const buffered = times(5, () => streamed({ ttftMs: 990, gapMs: 0, chunks: 256, tailMs: 10 }));
    expect(streamTiming(buffered[0]!, { clientHoldMs: 20 }).shape).toBe('buffered-whole');
    const c = streamingCheck(buffered);
    expect(c.status).toBe('fail');
    expect(c.code).toBe('buffered-whole');
    expect(c.facts).toMatchObject({ requests: 5, singleChunkRequests: 0, bufferedWholeRequests: 5 });
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
  it('passes when warm-up requests succeeded and were discarded, warns when off', () => {
    expect(warmupCheck([...times(4, warmOk), ok256()])).toEqual({
      id: 'warmup',
      status: 'pass',
      detail: '4/4 warm-up requests succeeded; warm-up was discarded before measuring',
    });
    const off = warmupCheck([ok256(), ok256()]);
    expect(off.status).toBe('warn');
    expect(off.detail).toContain('warm-up was off');
  });

  it('passes when at least one warm-up request succeeded, counting only the successes', () => {
    const c = warmupCheck([warmFailed(), warmOk(), warmFailed('timeout'), ok256()]);
    expect(c.status).toBe('pass');
    expect(c.detail).toBe('1/3 warm-up requests succeeded (2 failed); warm-up was discarded before measuring');
  });

  it('warns when every warm-up request failed: the server was not warm', () => {
    const c = warmupCheck([warmFailed(), warmFailed(), warmFailed('timeout'), ok256()]);
    expect(c.status).toBe('warn');
    expect(c.detail).toMatch(
      /^warm-up requests all failed: the server was not warm \(3\/3 failed: http-503 2, timeout 1\)/,
    );
  });
});

describe('round-spread', () => {
  it('passes at CV <= 15 %', () => {
    // [90, 100, 110] -> CV 0.1
    expect(roundSpreadCheck([90, 100, 110])).toMatchObject({
      id: 'round-spread',
      status: 'pass',
      detail: 'CV 10.0 % over 3 rounds (90, 100, 110 tok/s)',
      code: 'steady',
      facts: { cv: expect.closeTo(0.1, 6), limit: 0.15, rounds: 3 },
    });
  });

  it('fails above 15 %, giving the CV and per-round figures', () => {
    // [80, 100, 120] -> std 20, CV 0.2
    const c = roundSpreadCheck([80, 100, 120]);
    expect(c).toMatchObject({ status: 'fail', code: 'spread-over-limit' });
    expect(c.detail).toContain('CV 20.0 % over 3 rounds (80, 100, 120 tok/s) exceeds 15.0 %');
  });

  it('warns with fewer than 2 rounds', () => {
    expect(roundSpreadCheck([1234.4]).status).toBe('warn');
    expect(roundSpreadCheck([1234.4]).detail).toContain('1 round (1,234 tok/s)');
  });

  it('names partial rounds left out of the spread', () => {
    const c = roundSpreadCheck([90, 100, 110], 1);
    expect(c.status).toBe('pass');
    expect(c.detail).toBe('CV 10.0 % over 3 rounds (90, 100, 110 tok/s); 1 partial round left out');
    const one = roundSpreadCheck([100], 1);
    expect(one.status).toBe('warn');
    expect(one.detail).toContain('1 complete round (100 tok/s); 1 partial round left out');
  });

  it('warns when no round completed: the partial round gives no throughput', () => {
    const c = roundSpreadCheck([], 1);
    expect(c.status).toBe('warn');
    expect(c.detail).toMatch(/^no round completed: the partial round .* give no throughput, cost or spread/);
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

  it('leaves user-cancelled requests out of the count and the share, naming them', () => {
    const c = errorsCheck([...times(8, () => ok256()), ...times(4, () => failed(0, 5, 'cancelled'))]);
    expect(c).toEqual({
      id: 'errors',
      status: 'pass',
      detail: '0/8 requests failed; 4 cancelled when the run was stopped, not counted',
    });
  });

  it('counts a dying server as a failure', () => {
    const c = errorsCheck([...times(8, () => ok256()), failed(0, 5, 'server-died'), failed(0, 5, 'cancelled')]);
    expect(c.status).toBe('fail');
    expect(c.detail).toBe(
      '1/9 requests failed (11.1 %): server-died 1; 1 cancelled when the run was stopped, not counted',
    );
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
    expect(hits.detail).toContain('1,200 prefix-cache hits despite unique prompts');
  });

  it('takes a prompt file’s natural hits as the workload’s, and warns when the file was read round again', () => {
    const once = prefixCacheCheck({ uniquePrefix: true, promptsFromFile: true, prefixCacheHitsDelta: 416 });
    expect(once.status).toBe('pass');
    expect(once.detail).toMatch(/each record once.*416 prefix-cache hits/);
    const again = prefixCacheCheck({
      uniquePrefix: true,
      promptsFromFile: true,
      repeatedRecords: 12,
      prefixCacheHitsDelta: 9000,
    });
    expect(again.status).toBe('warn');
    expect(again.detail).toMatch(
      /^12 requests resent a record of the prompt file .* use a longer file or fewer requests$/,
    );
  });
});

describe("prefix-cache from the server's responses (no engine counter: llama.cpp)", () => {
  const rc = (cachedTokens: number, mostlyCachedRequests: number, requests = 40, of = 40) => ({
    requests,
    of,
    cachedTokens,
    openingTokens: 31,
    openingCounted: true,
    mostlyCachedRequests,
    hitRate: requests === of ? cachedTokens / (of * 1024) : null,
  });

  it('passes unique prompts whose cached tokens are only the opening every prompt shares', () => {
    const c = prefixCacheCheck({ uniquePrefix: true, responseCache: rc(1200, 0), openingTokens: 31 });
    expect(c.status).toBe('pass');
    expect(c.detail).toBe(
      "every prompt starts with a unique prefix; the server's responses report 1,200 cached prompt tokens: no more than the 31-token opening every prompt shares (chat template, first words), which real traffic caches too",
    );
  });

  it('warns when responses say requests had half or more of the rest of their prompt from the cache', () => {
    const c = prefixCacheCheck({ uniquePrefix: true, responseCache: rc(30_000, 25) });
    expect(c.status).toBe('warn');
    expect(c.detail).toMatch(/^25 requests had half or more of their prompt past the shared opening served/);
  });

  it('believes responses that saw reuse over an engine counter that missed it, and says how many reported', () => {
    // A counter scraped once a second can miss a short level's hits; the responses count each request.
    const both = prefixCacheCheck({ uniquePrefix: true, prefixCacheHitsDelta: 0, responseCache: rc(30_000, 25) });
    expect(both.status).toBe('warn');
    expect(prefixCacheCheck({ uniquePrefix: true, prefixCacheHitsDelta: 0, responseCache: rc(400, 0) }).detail).toBe(
      "every prompt starts with a unique prefix; the engine reports 0 prefix-cache hits; the server's responses report 400 cached prompt tokens: no more than the 31-token opening every prompt shares (chat template, first words), which real traffic caches too",
    );
    const shared = prefixCacheCheck({ uniquePrefix: true, sharedPrefixes: true, responseCache: rc(9000, 30, 30, 40) });
    expect(shared.detail).toContain(
      "the server's responses report 9,000 cached prompt tokens (30 of 40 responses said)",
    );
  });
});

describe('prefix-cache from the engine counter: the opening every prompt shares is no reuse', () => {
  it("passes vLLM's block of a Llama-3 template opening (16 of 31 tokens per request), warns past the opening", () => {
    const opening = prefixCacheCheck({
      uniquePrefix: true,
      prefixCacheHitsDelta: 16 * 300,
      measuredRequests: 300,
      openingTokens: 31,
    });
    expect(opening.status).toBe('pass');
    expect(opening.detail).toBe(
      'every prompt starts with a unique prefix; the engine reports 4,800 prefix-cache hits: no more than the 31-token opening every prompt shares (chat template, first words), which real traffic caches too',
    );
    const more = prefixCacheCheck({
      uniquePrefix: true,
      prefixCacheHitsDelta: 512 * 300,
      measuredRequests: 300,
      openingTokens: 31,
    });
    expect(more.status).toBe('warn');
    expect(more.detail).toContain('(512 tokens per request, more than the 31-token opening every prompt shares)');
  });

  it('warns on any hits when the opening could not be counted (no exact /tokenize)', () => {
    const c = prefixCacheCheck({ uniquePrefix: true, prefixCacheHitsDelta: 4800, measuredRequests: 300 });
    expect(c.status).toBe('warn');
    expect(c.detail).toBe(
      'the engine reports 4,800 prefix-cache hits despite unique prompts: some requests may have reused cached prefill',
    );
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

  const lagOk = { loopLagP99Ms: 3, scheduleLagP99Ms: null };

  it('fails a closed-loop level that held below 95 % of its concurrency, saying how much was offered', () => {
    const c = clientCheck({ ...lagOk, askedConcurrency: 64, offered: { inFlightMean: 9.1, inFlightP5: 4 } });
    expect(c.status).toBe('fail');
    expect(c.code).toBe('offered-below-asked');
    expect(c.facts).toMatchObject({ achievedConcurrency: 9.1, achievedConcurrencyP5: 4, askedConcurrency: 64 });
    expect(c.facts?.ratio).toBeCloseTo(9.1 / 64, 12);
    const held = clientCheck({ ...lagOk, askedConcurrency: 64, offered: { inFlightMean: 61, inFlightP5: 60 } });
    expect(held.status).toBe('pass');
    expect(held.code).toBe('kept-up');
    expect(held.facts).toMatchObject({ achievedConcurrency: 61, askedConcurrency: 64 });
  });

  it('only warns when most of the shortfall followed requests the server failed fast', () => {
    const c = clientCheck({
      ...lagOk,
      askedConcurrency: 16,
      offered: { inFlightMean: 6, inFlightP5: 2, shortfallAfterFailures: 0.8 },
    });
    expect(c.status).toBe('warn');
    expect(c.code).toBe('offered-below-asked-failures');
    expect(c.facts).toMatchObject({ shortfallAfterFailures: 0.8, achievedConcurrency: 6 });
    const mostlyClient = clientCheck({
      ...lagOk,
      askedConcurrency: 16,
      offered: { inFlightMean: 6, inFlightP5: 2, shortfallAfterFailures: 0.2 },
    });
    expect(mostlyClient.code).toBe('offered-below-asked');
  });

  it('judges multi-turn levels by conversations in flight, not requests', () => {
    const c = clientCheck({
      ...lagOk,
      askedConcurrency: 8,
      offered: { inFlightMean: 3, inFlightP5: 1, conversationsMean: 7.9, conversationsP5: 7 },
    });
    expect(c.status).toBe('pass');
    expect(c.facts).toMatchObject({ achievedConcurrency: 7.9, achievedRequestsInFlight: 3 });
  });

  it('fails an open-loop level whose sends fell behind the rate, unless a full cap held them', () => {
    const slow = { ratePerSec: 40, scheduledRatePerSec: 50 };
    const c = clientCheck({ ...lagOk, askedRate: 50, offered: slow, rateLateMs: 500, rateRounds: 2 });
    expect(c.status).toBe('fail');
    expect(c.code).toBe('offered-below-asked');
    expect(c.facts).toMatchObject({ achievedRate: 40, scheduledRate: 50, askedRate: 50, ratio: 0.8 });
    const capped = clientCheck({
      ...lagOk,
      askedRate: 50,
      offered: { ...slow, heldByCap: 30 },
      rateLateMs: 500,
      rateRounds: 2,
      cap: 4,
    });
    expect(capped.status).toBe('warn');
    expect(capped.code).toBe('rate-held-by-cap');
    expect(capped.facts).toMatchObject({ heldByCap: 30 });
    // Late by no more than the schedule-lag limits per round: on time, then a warning, at any rate.
    const onTime = clientCheck({ ...lagOk, askedRate: 5000, offered: slow, rateLateMs: 15, rateRounds: 2 });
    expect(onTime.status).toBe('pass');
    const aLittle = clientCheck({ ...lagOk, askedRate: 5000, offered: slow, rateLateMs: 60, rateRounds: 2 });
    expect(aLittle.status).toBe('warn');
    expect(aLittle.code).toBe('offered-below-asked');
    expect(aLittle.facts).toMatchObject({ rateLateMs: 60 });
  });

  it('names the lag when the lag is the worst reason', () => {
    expect(clientCheck({ loopLagP99Ms: 150, scheduleLagP99Ms: null }).code).toBe('client-lag');
    expect(clientCheck({ loopLagP99Ms: null, scheduleLagP99Ms: null }).code).toBe('loop-lag-unknown');
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

  it('warns on malformed SSE lines even when the counts agree', () => {
    const records = [
      streamed({ chunks: 8 }),
      streamed({ chunks: 8 }, { malformedLines: 2 }),
      streamed({ chunks: 8 }, { malformedLines: 1 }),
    ];
    expect(tokenAgreementCheck(records.slice(0, 1)).status).toBe('pass');
    const c = tokenAgreementCheck(records);
    expect(c.status).toBe('warn');
    expect(c.detail).toMatch(/^3 SSE lines were not valid JSON; tokens they carried were absorbed by the next chunk/);
    expect(c.detail).toContain('client and server agree on output tokens for all 3 requests');
    // Malformed lines of a failed request count too; warm-up lines do not.
    expect(
      tokenAgreementCheck([streamed({ chunks: 8 }), failed(0, 5, 'midstream-error', { malformedLines: 1 })]).status,
    ).toBe('warn');
    expect(
      tokenAgreementCheck([streamed({ chunks: 8 }), warmOk()].map((r) => ({ ...r, malformedLines: r.warmup ? 5 : 0 })))
        .status,
    ).toBe('pass');
  });

  it('warns on a server-counted chunk carrying more tokens than the usual chunk (a lost event)', () => {
    // 1 token per chunk, but one event was lost: the next chunk carried 2. The sum still matches nOut.
    const lost = streamed({ chunks: 8 });
    lost.chunks.splice(3, 1);
    lost.chunks[3] = [lost.chunks[3]![0], 2];
    lost.clientChunkCount = 7;
    const c = tokenAgreementCheck([streamed({ chunks: 8 }), lost]);
    expect(c.status).toBe('warn');
    expect(c.detail).toMatch(
      /^1\/2 requests had a chunk carrying more tokens than their usual chunk \(e\.g\. 2 vs 1\)/,
    );
  });

  it('keeps diffusion blocks clean, a smaller last block included', () => {
    const blocks = streamed({ chunks: 8, tokensPerChunk: 32 });
    expect(tokenAgreementCheck([blocks]).status).toBe('pass');
    const shortLast = streamed({ chunks: 8, tokensPerChunk: 32 }, { nOut: 240, expectedOut: 240 });
    shortLast.chunks[7] = [shortLast.chunks[7]![0], 16];
    expect(tokenAgreementCheck([shortLast]).status).toBe('pass');
    // Two blocks, the last one half: a tie in counts goes to the larger size, so it stays clean.
    const two = streamed({ chunks: 2, tokensPerChunk: 32 }, { nOut: 48, expectedOut: 48 });
    two.chunks[1] = [two.chunks[1]![0], 16];
    expect(tokenAgreementCheck([two]).status).toBe('pass');
  });

  it('does not judge chunk sizes where they are estimated (one per chunk)', () => {
    const est = streamed({ chunks: 4 }, { chunkTokensSource: 'estimated', nOut: 4 });
    est.chunks[1] = [est.chunks[1]![0], 3]; // not a server figure: ignored
    expect(tokenAgreementCheck([est]).status).toBe('pass');
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
      [warmupCheck([warmOk(), warmOk()]), roundSpreadCheck([100, 101])],
      [warmupCheck([warmOk(), warmOk()]), roundSpreadCheck([80, 100, 120])],
      [warmupCheck([]), roundSpreadCheck([100])],
    ];
    const run = combineChecks(levels, ['c=1', 'c=2', 'c=4']);
    expect(run.map((c) => [c.id, c.status])).toEqual([
      ['warmup', 'warn'],
      ['round-spread', 'fail'],
    ]);
    expect(run[0]!.detail).toMatch(/^warn at c=4 \(c=4: warm-up was off/);
    expect(run[1]!.detail).toMatch(/^fail at c=2; warn at c=4 \(c=2: CV 20\.0 %/);
    const allPass = combineChecks([[warmupCheck([warmOk()])], [warmupCheck([warmOk()])]]);
    expect(allPass).toEqual([{ id: 'warmup', status: 'pass', detail: 'pass at all 2 levels' }]);
    expect(combineChecks([[errorsCheck([makeRecord()])]])[0]!.detail).toBe('0/1 requests failed');
  });
});
