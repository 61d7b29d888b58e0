import { describe, expect, it } from 'vitest';
import type { RequestRecord } from '../../../src/shared/request-record.js';
import type { WorkerLevelReport } from '../../../src/shared/distributed.js';
import { requestHttpTimes } from '../../../src/shared/request-record.js';
import { mergeParts, moveRecord, streamLevel, type WorkerPart } from '../../../src/core/distributed/merge.js';
import { requestMetrics } from '../../../src/core/metrics/request-metrics.js';
import { LevelAccumulator } from '../../../src/core/metrics/level-accumulator.js';

function record(id: number, sendMs: number, round = 0): RequestRecord {
  return {
    id,
    requestTag: `t-${id}`,
    levelIndex: 0,
    round,
    warmup: round < 0,
    sendMs,
    firstTokenMs: sendMs + 20.125,
    endMs: sendMs + 90.5,
    chunks: [
      [sendMs + 20.125, 1],
      [sendMs + 30.25, 1],
      [sendMs + 90.5, 1],
    ],
    nOut: 3,
    nOutSource: 'server',
    chunkTokensSource: 'server',
    clientChunkCount: 3,
    nIn: 64,
    expectedIn: 64,
    expectedOut: 3,
    finishReason: 'length',
    ok: true,
    malformedLines: 0,
    scheduledMs: sendMs - 1,
  };
}

function report(rank: number, offsetMs: number, extra: Partial<WorkerLevelReport> = {}): WorkerLevelReport {
  const o = { offsetMs, uncertaintyMs: 0.1, rttMs: 0.2, atMs: 0, pings: 32 };
  const plan = { concurrency: 2, inputLen: 64, outputLen: 3, rounds: 2, requestsPerRound: 4, warmup: 0 };
  return {
    rank,
    host: `n${rank + 1}`,
    levelIndex: 0,
    serverConfigIndex: 0,
    plan,
    share: plan,
    requests: 2,
    offsetBefore: rank === 0 ? null : o,
    offsetAfter: rank === 0 ? null : o,
    loopLagP99Ms: 1,
    roundsCompleted: 2,
    aborted: false,
    skippedTurns: 0,
    startLateMs: 0,
    startMs: 0,
    endMs: 1000,
    ...extra,
  };
}

describe('merging raw records', () => {
  it("moves a record onto rank 0's clock with its latencies exactly as measured", () => {
    const r = record(1, 1000.5);
    r.http = { connectStartMs: 1001, connectEndMs: 1002, requestSentMs: 1003, headersMs: 1010, firstByteMs: null };
    const before = requestMetrics(r);
    const times = requestHttpTimes(r);
    const moved = moveRecord(r, 250.25, 2);
    expect(moved.sendMs).toBe(1250.75);
    expect(requestHttpTimes(moved)).toEqual(times);
    expect(moved.scheduledMs).toBe(1249.75);
    expect(moved.worker).toBe(2);
    expect(requestMetrics(moved)).toEqual(before);
  });

  it("keeps every worker's records once, in id order, on one timeline", async () => {
    const parts: WorkerPart[] = [
      { rank: 0, report: report(0, 0), records: [record(0, 10), record(1, 500, 1)] },
      { rank: 1, report: report(1, 100), records: [record(2, 5), record(3, 400, 1)] },
    ];
    const out = (await mergeParts(parts)).output(2);
    expect(out.measured.map((r) => [r.id, r.worker, r.sendMs])).toEqual([
      [0, 0, 10],
      [1, 0, 500],
      [2, 1, 105],
      [3, 1, 500],
    ]);
    expect(out.roundsCompleted).toBe(2);
    expect(out.aborted).toBe(false);
    expect(out.measureStartMs).toBe(10);
    expect(out.measureEndMs).toBe(590.5);
  });

  it('is cut short when a worker was, or was lost without a report', async () => {
    const cut = (
      await mergeParts([{ rank: 0, report: report(0, 0, { aborted: true, roundsCompleted: 1 }), records: [] }])
    ).output(2);
    expect(cut).toMatchObject({ aborted: true, roundsCompleted: 1 });
    const lost = (
      await mergeParts([
        { rank: 0, report: report(0, 0), records: [record(0, 10)] },
        {
          rank: 1,
          report: null,
          records: [record(1, 10)],
          offsets: { offsetBefore: report(1, 7).offsetBefore, offsetAfter: null },
        },
      ])
    ).output(2);
    expect(lost.aborted).toBe(true);
    expect(lost.measured.find((r) => r.id === 1)?.sendMs).toBe(17);
  });

  it('streams shards by id into batches as they are read, and counts each worker without keeping its records', async () => {
    const files = [
      [record(0, 10), record(2, 20), record(4, 30, 1)],
      [record(1, 5), record(3, 15), record(5, 25, 1)],
    ];
    const parts: WorkerPart[] = [
      { rank: 0, report: report(0, 0), records: [] },
      { rank: 1, report: report(1, 100), records: [] },
    ];
    const written: number[][] = [];
    const merge = await streamLevel(
      parts,
      files.map((f) => () => Promise.resolve(f.shift() ?? null)),
      (batch) => {
        written.push(batch.map((r) => r.id));
        return Promise.resolve();
      },
    );
    expect(written.flat()).toEqual([0, 1, 2, 3, 4, 5]);
    expect(merge.tallies.get(0)?.measured).toBe(3);
    expect(merge.tallies.get(1)?.measured).toBe(3);
    expect(merge.startMs).toBe(9);
    expect(merge.firstId).toBe(0);
    expect(merge.output(2).measured.find((r) => r.id === 5)?.sendMs).toBe(125);
  });

  it("summarises every worker's records together as they merge, keeping whole only a bounded sample", async () => {
    const files = [0, 1, 2].map((rank) =>
      Array.from({ length: 20 }, (_, i) => {
        const r = record(rank * 20 + i, 10 * i);
        // Each worker's TTFT differs, so a per-worker summary could not match the pooled one.
        r.firstTokenMs = r.sendMs + 10 * (rank + 1);
        r.chunks[0]![0] = r.firstTokenMs;
        return r;
      }),
    );
    const parts: WorkerPart[] = [0, 1, 2].map((rank) => ({ rank, report: report(rank, 0), records: [] }));
    const acc = new LevelAccumulator(0, { streamRecords: 8 });
    const out = (
      await streamLevel(
        parts,
        files.map((f) => () => Promise.resolve(f.shift() ?? null)),
        () => Promise.resolve(),
        acc,
      )
    ).output(2);
    expect(out.accumulated).toBe(acc);
    expect(acc.pooled.ttftMs.n).toBe(60);
    expect(acc.pooled.ttftMs.summary()).toMatchObject({ min: 10, max: 30, mean: 20 });
    expect(out.measured).toHaveLength(60);
    expect(out.measured.every((r) => r.chunks.length <= 2)).toBe(true);
    // The bound is passed by the record that outgrows it: that many kept whole, of every worker's 60.
    expect(acc.streamSample).toEqual({ kept: 9, of: 60 });
    expect(acc.streamRecords.every((r) => r.chunks.length === 3)).toBe(true);
  });
});
