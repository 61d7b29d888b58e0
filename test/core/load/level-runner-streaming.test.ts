import { describe, expect, it } from 'vitest';
import type { RequestExecutor } from '../../../src/core/load/executor.js';
import { runLevel } from '../../../src/core/load/level-runner.js';
import type { RequestSpec } from '../../../src/core/load/stream-client.js';
import { LevelAccumulator } from '../../../src/core/metrics/level-accumulator.js';
import type { RequestRecord } from '../../../src/shared/request-record.js';
import { levelRunInput } from './level-run-input.js';

const CHUNKS = 16;

/** Answers each request on the next turn of the loop with CHUNKS one-token chunks; counts the requests sent. */
function streamingExecutor(sent: { n: number }): RequestExecutor {
  return {
    threads: 0,
    execute: async (spec: RequestSpec) => {
      sent.n++;
      await new Promise((resolve) => setImmediate(resolve));
      const chunks: Array<[number, number]> = Array.from({ length: CHUNKS }, (_, i) => [10 + spec.id + i, 1]);
      return {
        id: spec.id,
        requestTag: spec.requestTag,
        sendMs: spec.id,
        endMs: spec.id + 10 + CHUNKS,
        httpStatus: 200,
        result: {
          firstTokenMs: chunks[0]![0],
          chunks,
          clientChunkCount: CHUNKS,
          completionTokens: CHUNKS,
          promptTokens: 10,
          chunkTokensFromServer: true,
          finishReason: 'length',
          sawDone: true,
          error: null,
          errorKind: null,
          malformedLines: 0,
          firstContentMs: null,
          sawReasoning: false,
          reasoningChunkTokens: 0,
          contentChunkTokens: CHUNKS,
          reasoningTokens: null,
          serverTimings: null,
          cachedPromptTokens: null,
        },
      };
    },
    abortAll: () => {},
    startLagWindow: () => {},
    endLagWindow: async () => null,
    close: async () => {},
  };
}

describe('level runner: records stream out as they finish', () => {
  it('hands records on in small batches during the round, in id order, and keeps none whole past the bound', async () => {
    const sent = { n: 0 };
    const batches: Array<{ ids: number[]; sentBefore: number }> = [];
    const done: number[] = [];
    const plan = { concurrency: 8, inputLen: 8, outputLen: CHUNKS, rounds: 1, requestsPerRound: 2000, warmup: 0 };
    const prompts = Array.from({ length: 2000 }, () => ({ text: 'p', tokens: 8 }));
    const accumulator = new LevelAccumulator(1, { streamRecords: 100 });
    const out = await runLevel(
      levelRunInput(plan, prompts, streamingExecutor(sent), {
        accumulator,
        onRecords: (records: RequestRecord[]) => batches.push({ ids: records.map((r) => r.id), sentBefore: sent.n }),
        onBatchDone: (round) => done.push(round),
      }),
    );
    // On disk before the round is over: the first batch went out while most requests were still to be sent.
    expect(batches.length).toBeGreaterThan(2);
    expect(batches[0]!.sentBefore).toBeLessThan(2000);
    expect(batches.every((b) => b.ids.length <= 256)).toBe(true);
    expect(batches.flatMap((b) => b.ids)).toEqual(Array.from({ length: 2000 }, (_, i) => i));
    expect(done).toEqual([0]);
    // What the level keeps: condensed records, and whole ones only in the bounded sample.
    expect(out.measured).toHaveLength(2000);
    expect(out.measured.every((r) => r.chunks.length === 2)).toBe(true);
    expect(out.accumulated?.streamRecords.length).toBe(101);
    expect(out.accumulated?.streamRecords.every((r) => r.chunks.length === CHUNKS)).toBe(true);
    expect(out.accumulated?.pooled.itlMs.n).toBe(2000 * (CHUNKS - 1));
  });
});

describe('level runner: --precision stops a level early', () => {
  it('asks after each complete round with the measured records, and sends no further round once told to stop', async () => {
    const sent = { n: 0 };
    const looks: Array<[number, number]> = [];
    const plan = { concurrency: 4, inputLen: 8, outputLen: CHUNKS, rounds: 5, requestsPerRound: 10, warmup: 4 };
    const prompts = Array.from({ length: 54 }, () => ({ text: 'p', tokens: 8 }));
    const out = await runLevel(
      levelRunInput(plan, prompts, streamingExecutor(sent), {
        stopAfterRound: (rounds, measured) => {
          looks.push([rounds, measured.length]);
          return rounds === 2;
        },
      }),
    );
    expect(looks).toEqual([
      [1, 10],
      [2, 20],
    ]);
    expect(out.roundsCompleted).toBe(2);
    expect(out.aborted).toBe(false);
    expect(sent.n).toBe(4 + 20);
  });
});
