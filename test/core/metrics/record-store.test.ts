import { describe, expect, it } from 'vitest';
import { LevelAccumulator, condensed } from '../../../src/core/metrics/level-accumulator.js';
import { summarizeLevel } from '../../../src/core/metrics/level-summary.js';
import { RecordStore } from '../../../src/core/metrics/record-store.js';
import { createRng, type Rng } from '../../../src/core/rng.js';
import type { RequestRecord } from '../../../src/shared/request-record.js';
import { failed, streamed } from './make-record.js';

const pick = <T>(rng: Rng, xs: readonly T[]): T => xs[Math.floor(rng() * xs.length)]!;

/** One random record: warm-up or measured, ok or failed, with turns, adapters, replicas, phases and odd values. */
function randomRecord(rng: Rng, id: number): RequestRecord {
  const sendMs = id * 2.5 + rng();
  const warmup = id < 12;
  const over: Partial<RequestRecord> = {
    id,
    requestTag: pick(rng, [`sb-run-1-${id}`, `sb-run-1-${id}`, `odd-tag-${id}x`, `lead-0${id}`]),
    round: warmup ? -1 : Math.floor(id / 97),
    warmup,
    ...(rng() < 0.3 && { adapter: pick(rng, ['a', 'b', 'c']) }),
    ...(rng() < 0.3 && { replica: Math.floor(rng() * 3) }),
    ...(rng() < 0.2 && { workload: { conversation: id >> 2, turn: id & 3 } }),
    ...(rng() < 0.1 && { scheduledMs: sendMs - rng() }),
    ...(rng() < 0.1 && { cachedPromptTokens: Math.floor(rng() * 8) }),
    ...(rng() < 0.1 && { nReasoning: 3, nContent: 5, nReasoningSource: 'estimated' as const }),
    ...(rng() < 0.05 && {
      usageProblems: [{ field: 'completion_tokens' as const, code: 'not-a-count' as const, value: null }],
    }),
    ...(rng() < 0.05 && { nIn: 1.5 }),
    ...(rng() < 0.05 && { expectedIn: -0 }),
    ...(rng() < 0.05 && { firstContentMs: null }),
    http: pick(rng, [
      { requestSentMs: sendMs + 0.1, headersMs: sendMs + 3, firstByteMs: sendMs + 3.2 },
      {
        connectStartMs: sendMs,
        connectEndMs: sendMs + 0.4,
        requestSentMs: sendMs + 0.5,
        headersMs: null,
        firstByteMs: null,
      },
      { headersMs: 1, requestSentMs: 0, firstByteMs: 2 },
      undefined,
    ]),
  };
  if (over.http === undefined) delete over.http;
  if (rng() < 0.15) return failed(sendMs, rng() < 0.5 ? null : sendMs + 40, pick(rng, ['http-500', 'timeout']), over);
  const shape = { sendMs, ttftMs: 10 + rng() * 90, gapMs: 2 + rng() * 10, chunks: Math.floor(rng() * 9) };
  return streamed({ ...shape, tokensPerChunk: 1 + Math.floor(rng() * 3) }, over);
}

/** A record's fields read back one by one into a plain object (its own keys, and any a view answers for). */
function fieldsOf(r: RequestRecord, keys: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of keys) out[k] = (r as unknown as Record<string, unknown>)[k];
  return out;
}

const ALL_KEYS = [
  ...Object.keys(randomRecord(createRng(1), 0)),
  ...['scheduledMs', 'ttftMs', 'e2eMs', 'error', 'errorKind', 'httpStatus', 'firstContentMs', 'nReasoning'],
  ...['nContent', 'nReasoningSource', 'expectedInSource', 'workload', 'serverPromptMs', 'serverDecodeMs'],
  ...['adapter', 'replica', 'worker', 'cachedPromptTokens', 'usageProblems', 'http', 'extra'],
];

describe('RecordStore', () => {
  it('reads every field of every record back exactly as it was given, absent and null included', () => {
    const rng = createRng(11);
    const store = new RecordStore();
    const records = Array.from({ length: 3000 }, (_, id) => condensed(randomRecord(rng, id)));
    records[7] = { ...records[7]!, extra: 'kept' } as RequestRecord;
    records[8] = { ...records[8]!, sendMs: Number.NaN, endMs: -0, httpStatus: 2 ** 40 };
    const views = records.map((r) => store.push(r));
    expect(store.length).toBe(3000);
    views.forEach((v, k) => {
      const want = fieldsOf(records[k]!, ALL_KEYS);
      const got = fieldsOf(v, ALL_KEYS);
      expect(got, `record ${k}`).toEqual(want);
      for (const key of ALL_KEYS) expect(Object.is(got[key], want[key]) || typeof want[key] === 'object').toBe(true);
    });
  });

  it('keeps a field set on a view', () => {
    const store = new RecordStore();
    const view = store.push(condensed(randomRecord(createRng(2), 40)));
    view.workload = { conversation: 9 };
    view.nOut = 1.25;
    expect([view.workload, view.nOut]).toEqual([{ conversation: 9 }, 1.25]);
  });

  it('gives a level summarised from its views the very result of its condensed records as objects', () => {
    const rng = createRng(5);
    const records = Array.from({ length: 2500 }, (_, id) => randomRecord(rng, id));
    const acc = new LevelAccumulator(9, { streamRecords: 200 });
    for (const r of records) acc.add(r);
    const views = [...acc.warmup, ...acc.measured];
    // The old path: every kept record a plain condensed object.
    const plain = records.map(condensed);
    const input = {
      concurrency: 8,
      inputLen: 8,
      outputLen: 4,
      rounds: 26,
      warmupRequests: 12,
      serverConfigIndex: 0,
      uniquePrefix: true,
      slo: { ttftMs: 60 },
    };
    const fromViews = summarizeLevel({ ...input, records: views, accumulated: acc });
    const fromObjects = summarizeLevel({ ...input, records: plain, accumulated: acc });
    expect(fromViews.byAdapter).toBeDefined();
    expect(fromViews.byReplica).toBeDefined();
    expect(fromViews.byTurn).toBeDefined();
    expect(fromViews.goodput).toBeDefined();
    expect(JSON.stringify(fromViews)).toBe(JSON.stringify(fromObjects));
  });
});
