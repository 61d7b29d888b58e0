import { describe, expect, it } from 'vitest';
import type { RequestExecutor } from '../../../src/core/load/executor.js';
import { runLevel } from '../../../src/core/load/level-runner.js';
import type { LevelRunInput } from '../../../src/core/load/level-runner.js';
import type { Prompt } from '../../../src/core/load/prompts.js';
import { StreamAccumulator } from '../../../src/core/load/stream-accumulator.js';
import type { RequestSpec } from '../../../src/core/load/stream-client.js';
import { levelRunInput } from './level-run-input.js';

/** Answers at once with `answer-<id>` (kept only when asked) and a prompt count of 100 + 10 x id. */
function answeringExecutor(specs: RequestSpec[]): RequestExecutor {
  return {
    threads: 0,
    execute: async (spec) => {
      specs.push(spec);
      const acc = new StreamAccumulator({ keepText: spec.keepText });
      const usage = { prompt_tokens: 100 + 10 * spec.id, completion_tokens: 2 };
      acc.onEvent(JSON.stringify({ choices: [{ delta: { content: `answer-${spec.id}` } }] }), 1);
      acc.onEvent(JSON.stringify({ choices: [{ delta: {}, finish_reason: 'length' }], usage }), 2);
      return { id: spec.id, requestTag: spec.requestTag, sendMs: 0, endMs: 2, httpStatus: 200, result: acc.result() };
    },
    abortAll: () => {},
    startLagWindow: () => {},
    endLagWindow: async () => null,
    close: async () => {},
  };
}

function input(specs: RequestSpec[], prompts: Prompt[], over: Partial<LevelRunInput> = {}): LevelRunInput {
  const plan = { concurrency: 1, inputLen: 100, outputLen: 2, rounds: 1, requestsPerRound: 2, warmup: 2, turns: 2 };
  return levelRunInput(plan, prompts, answeringExecutor(specs), over);
}

const prompts = (n: number): Prompt[] => Array.from({ length: n }, (_, i) => ({ text: `user-${i}`, tokens: 100 }));

describe('runLevel with turns', () => {
  it('runs warm-up and rounds as conversations, sending the answers back as the history', async () => {
    const specs: RequestSpec[] = [];
    const out = await runLevel(input(specs, prompts(4), { countMessages: async (m) => 1000 + m.length }));
    expect(specs.map((s) => s.keepText === true)).toEqual([true, false, true, false]);
    const body = JSON.parse(specs[3]!.body) as { messages: unknown };
    expect(body.messages).toEqual([
      { role: 'user', content: 'user-2' },
      { role: 'assistant', content: 'answer-2' },
      { role: 'user', content: 'user-3' },
    ]);
    expect(out.warmup.map((r) => r.workload)).toEqual([
      { conversation: 0, turn: 0 },
      { conversation: 0, turn: 1 },
    ]);
    expect(out.measured.map((r) => [r.workload?.conversation, r.workload?.turn, r.expectedIn])).toEqual([
      [1, 0, 100],
      [1, 1, 1003],
    ]);
  });

  it('without a history counter, takes the server’s count for later turns and marks it', async () => {
    const specs: RequestSpec[] = [];
    const out = await runLevel(input(specs, prompts(4)));
    expect(out.measured.map((r) => [r.expectedIn, r.expectedInSource])).toEqual([
      [100, undefined],
      [130, 'server'],
    ]);
  });
});
