import { describe, expect, it } from 'vitest';
import { errorsCheck } from '../../../src/core/checks/errors.js';
import { inputLengthCheck } from '../../../src/core/checks/input-length.js';
import { prefixCacheCheck } from '../../../src/core/checks/prefix-cache.js';
import { summarizeLevel, turnResults } from '../../../src/core/metrics/level-summary.js';
import { failed, makeRecord } from './make-record.js';

/** An ok turn of a conversation with the given TTFT and prompt tokens. */
const turn = (t: number, ttftMs: number, nIn: number, id = 0) =>
  makeRecord({
    id,
    sendMs: 0,
    firstTokenMs: ttftMs,
    endMs: ttftMs + 1,
    nIn,
    expectedIn: nIn,
    workload: { conversation: id, turn: t },
  });

describe('multi-turn level summary', () => {
  it('summarizes TTFT and prompt tokens per turn, over ok requests only', () => {
    const records = [
      turn(0, 10, 40, 0),
      turn(1, 5, 86, 0),
      turn(0, 30, 40, 1),
      turn(1, 7, 86, 1),
      { ...turn(1, 99, 999, 2), ok: false },
    ];
    const turns = turnResults(records)!;
    expect(turns.map((t) => [t.turn, t.ttftMs.n, t.ttftMs.max, t.inputTokens])).toEqual([
      [0, 2, 30, 40],
      [1, 2, 7, 86],
    ]);
  });

  it('has nothing per turn for single-request levels', () => {
    expect(turnResults([makeRecord(), makeRecord({ workload: { group: 1 } })])).toBeNull();
  });

  it('calls histories the server counted itself unverified, and lists many lengths as a range', () => {
    const counted = [40, 86, 132, 178, 224].map((n, i) => turn(i, 1, n));
    expect(inputLengthCheck(counted)).toMatchObject({
      status: 'pass',
      code: 'exact',
      facts: { requests: 5 },
    });
    const uncounted = [...counted, { ...turn(1, 1, 86), expectedInSource: 'server' as const }];
    expect(inputLengthCheck(uncounted)).toMatchObject({
      status: 'warn',
      code: 'not-counted-ahead',
      facts: { uncountedRequests: 1, requests: 6, multiTurn: true },
    });
    const wrong = [...uncounted, { ...turn(2, 1, 130), expectedIn: 132 }];
    expect(inputLengthCheck(wrong)).toMatchObject({ status: 'fail' });
  });

  it('takes prefix-cache hits on the histories as expected in a multi-turn level', () => {
    expect(prefixCacheCheck({ uniquePrefix: true, prefixCacheHitsDelta: 120, multiTurn: true })).toMatchObject({
      status: 'pass',
      code: 'history-cached',
      facts: { engineHits: 120 },
    });
    expect(prefixCacheCheck({ uniquePrefix: true, prefixCacheHitsDelta: 120 })).toMatchObject({ status: 'warn' });
  });

  it('says how many turns were not sent after a failed turn, beside the failures, and only when some were', () => {
    const records = [
      turn(0, 10, 40, 0),
      failed(20, 30, 'http-5xx', { id: 1, workload: { conversation: 0, turn: 1 } }),
      failed(40, 50, 'http-5xx', { id: 2, workload: { conversation: 1, turn: 0 } }),
    ];
    const level = summarizeLevel({
      records,
      concurrency: 1,
      inputLen: 40,
      outputLen: 4,
      rounds: 1,
      warmupRequests: 0,
      serverConfigIndex: 0,
      uniquePrefix: true,
      skippedTurns: 3,
    });
    expect(level).toMatchObject({ completed: 1, failed: 2, skippedTurns: 3 });
    // The share counts sent requests only: 2 of 3, not of 6.
    expect(level.checks.find((c) => c.id === 'errors')).toMatchObject({
      status: 'fail',
      code: 'too-many-failed',
      facts: { failed: 2, requests: 3, skippedTurns: 3, errorKinds: 'http-5xx 2' },
    });
    const none = summarizeLevel({
      records: [turn(0, 10, 40)],
      concurrency: 1,
      inputLen: 40,
      outputLen: 4,
      rounds: 1,
      warmupRequests: 0,
      serverConfigIndex: 0,
      uniquePrefix: true,
      skippedTurns: 0,
    });
    expect(none.skippedTurns).toBeUndefined();
    expect(errorsCheck([turn(0, 10, 40)])).toMatchObject({ code: 'none-failed', facts: { skippedTurns: 0 } });
    expect(errorsCheck(records, 1).facts).toMatchObject({ skippedTurns: 1 });
  });
});
