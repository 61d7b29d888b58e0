import { describe, expect, it } from 'vitest';
import { clientCheck } from '../../../src/core/checks/client.js';
import { clockCheck } from '../../../src/core/checks/clock.js';
import { combineChecks } from '../../../src/core/checks/combine.js';
import { cutShortCheck } from '../../../src/core/checks/cut-short.js';
import { errorsCheck } from '../../../src/core/checks/errors.js';
import { inputLengthCheck } from '../../../src/core/checks/input-length.js';
import { outputLengthCheck } from '../../../src/core/checks/output-length.js';
import { preemptionsCheck } from '../../../src/core/checks/preemptions.js';
import { prefixCacheCheck } from '../../../src/core/checks/prefix-cache.js';
import { renderCheck, renderedCodes } from '../../../src/core/checks/prose.js';
import { roundSpreadCheck } from '../../../src/core/checks/round-spread.js';
import { sampleSizeCheck } from '../../../src/core/checks/sample-size.js';
import { serverCheck } from '../../../src/core/checks/server.js';
import { streamingCheck } from '../../../src/core/checks/streaming.js';
import { throttlingCheck } from '../../../src/core/checks/throttling.js';
import { tokenAgreementCheck } from '../../../src/core/checks/token-agreement.js';
import { warmupCheck } from '../../../src/core/checks/warmup.js';
import { summarize } from '../../../src/core/metrics/percentiles.js';
import type { RequestRecord } from '../../../src/shared/request-record.js';
import { levelTelemetry } from '../../fakes/level-telemetry.js';
import { failed, streamed } from '../metrics/make-record.js';

// The sentences people read, one test per check: the other tests assert codes and facts only.
const times = <T>(n: number, make: (i: number) => T): T[] => Array.from({ length: n }, (_, i) => make(i));
const ok256 = (over: Partial<RequestRecord> = {}): RequestRecord =>
  streamed({ chunks: 256, gapMs: 10 }, { nIn: 512, expectedIn: 512, ...over });
const warm = (ok: boolean, kind = 'http-503'): RequestRecord =>
  ok ? streamed({ chunks: 4 }, { round: -1, warmup: true }) : failed(0, 5, kind, { round: -1, warmup: true });

describe('the prose renderer', () => {
  it('words warm-up from its code and facts', () => {
    expect(warmupCheck([warm(true), warm(false), warm(false, 'timeout'), ok256()]).detail).toBe(
      '1/3 warm-up requests succeeded (2 failed); warm-up was discarded before measuring',
    );
    expect(warmupCheck([ok256()]).detail).toBe(
      'warm-up was off: the first measured requests include cold-start effects (graph capture, caches, allocator)',
    );
    expect(warmupCheck([warm(false), warm(false, 'timeout'), ok256()]).detail).toBe(
      'warm-up requests all failed: the server was not warm (2/2 failed: http-503 1, timeout 1); the first measured requests may include cold-start effects',
    );
  });

  it('words sample size', () => {
    expect(sampleSizeCheck(summarize(times(48, (i) => i))).detail).toBe(
      '48 TTFT samples are too few for a 95.0 % confidence interval (p95 needs 59, p99 needs 299): treat those percentiles as rough, or run more requests',
    );
    expect(sampleSizeCheck(summarize(times(299, (i) => i))).detail).toBe(
      '299 TTFT samples: p95 and p99 carry 95.0 % confidence intervals',
    );
  });

  it('words errors, with cancelled requests, skipped turns and the server’s words', () => {
    expect(errorsCheck([...times(8, () => ok256()), ...times(4, () => failed(0, 5, 'cancelled'))]).detail).toBe(
      '0/8 requests failed; 4 cancelled when the run was stopped, not counted',
    );
    expect(errorsCheck([...times(199, () => ok256()), failed(0, 5, 'timeout')]).detail).toBe(
      '1/200 requests failed (0.5 %): timeout 1',
    );
    expect(errorsCheck([...times(8, () => ok256()), failed(0, 5, 'server-died')], 2).detail).toBe(
      '1/9 requests failed (11.1 %): server-died 1; 2 later turns not sent because an earlier turn of the conversation failed',
    );
  });

  it('words a level cut short', () => {
    const partial = { round: 1, partial: true, completed: 1, failed: 15 } as never;
    expect(cutShortCheck({ reason: 'the server died: CUDA out of memory', byServer: true }, [partial]).detail).toBe(
      'level cut short after 0 complete rounds: the server died: CUDA out of memory; the partial round (1 completed, 15 failed) gives no throughput, cost or round spread',
    );
  });

  it('words the server check', () => {
    const started = { serverFailure: null, serversStarted: 1, failure: null };
    expect(serverCheck({ ...started, simulated: true })?.detail).toBe(
      'SIMULATED engine: these numbers come from the built-in simulator, not a GPU',
    );
    expect(serverCheck({ ...started, simulated: false })?.detail).toBe('server stayed up for the whole run');
    expect(
      serverCheck({ ...started, simulated: false, serverFailure: { message: 'vLLM died', fix: 'free GPU memory' } })
        ?.detail,
    ).toBe('vLLM died — free GPU memory');
    expect(serverCheck({ ...started, serversStarted: 0, simulated: false, failure: 'port 8000 in use' })?.detail).toBe(
      'the server never became ready: port 8000 in use',
    );
    expect(serverCheck({ ...started, serversStarted: 0, simulated: false })).toBeNull();
  });

  it('words throttling and preemptions', () => {
    expect(throttlingCheck(levelTelemetry({ throttle: { thermalFraction: 0.25 } })).detail).toBe(
      "thermal slowdown 25 % of the measured window; lowest SM clock 1400 MHz (71 % of max), max 87 °C: these numbers are not the card's full speed (check airflow and fans, let it cool between levels)",
    );
    expect(throttlingCheck(levelTelemetry({ tempMaxC: 62 })).detail).toBe(
      'no thermal or hardware slowdown; SM clock 96 % of max on average, max 62 °C',
    );
    expect(throttlingCheck(levelTelemetry({ throttle: { powerCapFraction: 0.8 } })).detail).toBe(
      'power-capped 80 % of the measured window (normal at full load: the card runs at its power limit; SM clock 96 % of max on average, max 87 °C); no thermal or hardware slowdown',
    );
    expect(throttlingCheck(undefined).detail).toBe('unknown: no GPU telemetry was recorded for this level');
    expect(preemptionsCheck(levelTelemetry({ preemptions: 12 }))?.detail).toBe(
      'the engine preempted 12 requests during the measured window (KV cache peaked at 97 %): preempted requests are recomputed, so their latency includes that work',
    );
  });

  it('words the clock check of a distributed level', () => {
    const worker = (rank: number, uncertaintyMs: number | null) =>
      ({ rank, host: `n${rank + 1}`, requests: 10, uncertaintyMs, offsetChangeMs: rank === 0 ? null : 0.5 }) as never;
    const round = { round: 0, windowMs: 1000, partial: false } as never;
    expect(clockCheck([worker(0, 0), worker(1, 30)], [round]).detail).toBe(
      "offsets known within ±30 ms, moving at most 0.5 ms over the level: a round window (shortest 1,000 ms) is exact to within 60.5 ms (6.0 %), too coarse for this level's throughput; run longer rounds or reach rank 0 over a quieter network",
    );
    expect(clockCheck([worker(0, 0), worker(1, null)], [round]).detail).toBe(
      "worker 1 (n2) sent requests without a clock offset: their times on rank 0's timeline are not corrected",
    );
    expect(clockCheck([worker(0, 0), worker(1, 1)], []).detail).toBe(
      "offsets known within ±1 ms, moving at most 0.5 ms over the level; no complete round to hold it against (latencies are each worker's own)",
    );
  });

  it('has a sentence for every code it declares, without holes, and refuses a code it does not know', () => {
    for (const [id, code] of renderedCodes()) {
      const text = renderCheck(id, code, new Proxy({}, { get: () => 1 }));
      // "spread undefined" is the sentence's own word, not a missing fact.
      expect(text.replace('spread undefined', ''), `${id}/${code}`).not.toMatch(/undefined|NaN|\[object/);
    }
    expect(() => renderCheck('warmup', 'no-such-code', {})).toThrow(/no sentence for check warmup/);
  });
});

describe('sentences made in the check modules', () => {
  it('keeps each check’s sentence', () => {
    expect(outputLengthCheck(times(4, () => ok256())).detail).toBe(
      '4/4 requests produced exactly 256 tokens (server count)',
    );
    expect(inputLengthCheck([ok256(), ok256({ nIn: 510 }), ok256({ nIn: 511 })]).detail).toBe(
      '2/3 prompts had 510–511 tokens instead of 512 (server count)',
    );
    expect(roundSpreadCheck([80, 100, 120]).detail).toBe(
      'CV 20.0 % over 3 rounds (80, 100, 120 tok/s) exceeds 15.0 %: look for throttling or other load on the GPU',
    );
    expect(prefixCacheCheck({ uniquePrefix: true, prefixCacheHitsDelta: 4800, measuredRequests: 300 }).detail).toBe(
      'the engine reports 4,800 prefix-cache hits despite unique prompts: some requests may have reused cached prefill',
    );
    expect(clientCheck({ loopLagP99Ms: 150, scheduleLagP99Ms: null }).detail).toMatch(
      /^event-loop lag p99 150 ms \(over 100 ms\): the client is the bottleneck; its timings are not the server's/,
    );
    expect(tokenAgreementCheck(times(4, () => streamed({ chunks: 8 }))).detail).toBe(
      'client and server agree on output tokens for all 4 requests (per-chunk usage)',
    );
    expect(streamingCheck(times(10, () => streamed({ ttftMs: 100, gapMs: 20, chunks: 50 }))).detail).toMatch(
      /^tokens arrived over time in all 10 multi-token requests \(median 50 chunks per request/,
    );
  });

  it('names the levels of a run-level check and quotes the worst', () => {
    const run = combineChecks(
      [[roundSpreadCheck([100, 101])], [roundSpreadCheck([80, 100, 120])], [roundSpreadCheck([100])]],
      ['c=1', 'c=2', 'c=4'],
    );
    expect(run[0]!.detail).toMatch(/^fail at c=2; warn at c=4 \(c=2: CV 20\.0 %/);
    expect(combineChecks([[warmupCheck([warm(true)])], [warmupCheck([warm(true)])]])[0]!.detail).toBe(
      'pass at all 2 levels',
    );
  });
});
