import { describe, expect, it } from 'vitest';
import type { RequestExecutor } from '../../../src/core/load/executor.js';
import { runLevel } from '../../../src/core/load/level-runner.js';
import type { Prompt } from '../../../src/core/load/prompts.js';
import type { RequestSpec } from '../../../src/core/load/stream-client.js';
import { levelRunInput } from './level-run-input.js';

/** Answers every request at once with the output length it asked for; keeps the bodies it was sent. */
function recordingExecutor(bodies: Array<Record<string, unknown>>): RequestExecutor {
  return {
    threads: 0,
    execute: async (spec: RequestSpec) => {
      const body = JSON.parse(spec.body) as Record<string, unknown>;
      bodies.push(body);
      const n = body.max_tokens as number;
      return {
        id: spec.id,
        requestTag: spec.requestTag,
        sendMs: 0,
        endMs: 1,
        httpStatus: 200,
        result: {
          firstTokenMs: 0.5,
          chunks: [[0.5, n]],
          clientChunkCount: 1,
          completionTokens: n,
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
          contentChunkTokens: n,
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

describe('level runner with workload prompts', () => {
  it('sends a prompt’s own messages and output length, and records its lengths and place in the workload', async () => {
    const bodies: Array<Record<string, unknown>> = [];
    const prompts: Prompt[] = [
      { text: 'plain', tokens: 10 },
      {
        text: 'ignored in chat',
        tokens: 10,
        inputLen: 10,
        outputLen: 7,
        messages: [
          { role: 'system', content: 'shared' },
          { role: 'user', content: 'hi' },
        ],
        meta: { group: 2, sourceIndex: 5 },
      },
    ];
    const plan = { concurrency: 1, inputLen: 512, outputLen: 24, rounds: 1, requestsPerRound: 2, warmup: 0 };
    const out = await runLevel(levelRunInput(plan, prompts, recordingExecutor(bodies)));
    expect(bodies[0]).toMatchObject({ messages: [{ role: 'user', content: 'plain' }], max_tokens: 24 });
    expect(bodies[1]).toMatchObject({ messages: prompts[1]!.messages, max_tokens: 7, min_tokens: 7 });
    const [plain, workload] = out.measured;
    expect(plain).toMatchObject({ expectedIn: 512, expectedOut: 24 });
    expect(plain!.workload).toBeUndefined();
    expect(workload).toMatchObject({ expectedIn: 10, expectedOut: 7, workload: { group: 2, sourceIndex: 5 } });
  });
});
