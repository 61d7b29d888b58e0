import { describe, expect, it } from 'vitest';
import type { RequestExecutor } from '../../../src/core/load/executor.js';
import { runLevel } from '../../../src/core/load/level-runner.js';
import type { LevelRunInput } from '../../../src/core/load/level-runner.js';
import type { Prompt } from '../../../src/core/load/prompts.js';
import { StreamAccumulator } from '../../../src/core/load/stream-accumulator.js';
import type { RequestSpec } from '../../../src/core/load/stream-client.js';
import type { RunEvent } from '../../../src/shared/events.js';
import { createManualClock } from './manual-clock.js';
import type { ManualClock } from './manual-clock.js';
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

  it('counts a failed turn’s later turns as done in progress and as skipped in the measured rounds, sending none', async () => {
    const specs: RequestSpec[] = [];
    const events: RunEvent[] = [];
    // Warm-up: 1 conversation (id 0 fails); the round: 3 conversations (id 2, conversation 1’s turn 1, fails).
    const failing = new Set([0, 2]);
    const base = answeringExecutor(specs);
    const executor: RequestExecutor = {
      ...base,
      execute: async (spec) => {
        const o = await base.execute(spec);
        if (!failing.has(spec.id)) return o;
        const acc = new StreamAccumulator({});
        acc.fail('HTTP 500', 'http-5xx');
        return { ...o, httpStatus: 500, result: acc.result() };
      },
    };
    const out = await runLevel(
      input(specs, prompts(12), {
        plan: { concurrency: 1, inputLen: 100, outputLen: 2, rounds: 1, requestsPerRound: 9, warmup: 3, turns: 3 },
        executor,
        onEvent: (e) => events.push(e),
      }),
    );
    // Warm-up conversation 0 fails at turn 0 (2 skipped); measured conversation 1 fails at turn 1 (1 skipped).
    expect(specs).toHaveLength(1 + 2 + 3 + 3);
    expect(out.warmup).toHaveLength(1);
    expect(out.measured.map((r) => [r.workload?.conversation, r.workload?.turn, r.ok])).toEqual([
      [1, 0, true],
      [1, 1, false],
      [2, 0, true],
      [2, 1, true],
      [2, 2, true],
      [3, 0, true],
      [3, 1, true],
      [3, 2, true],
    ]);
    expect(out.skippedTurns).toBe(1);
    const done = events.flatMap((e) => (e.type === 'request-done' ? [[e.done, e.total]] : []));
    expect(done).toHaveLength(9);
    expect(done.at(-1)).toEqual([12, 12]);
    expect(done.slice(0, 3).map(([d]) => d)).toEqual([3, 4, 6]);
  });

  it('runs a rate level as conversations arriving on a Poisson schedule, capped in flight, first turns scheduled', async () => {
    const clock = createManualClock();
    const specs: RequestSpec[] = [];
    let inFlight = 0;
    let most = 0;
    const base = answeringExecutor(specs);
    const executor: RequestExecutor = {
      ...base,
      execute: async (spec) => {
        const sendMs = clock.nowMs();
        most = Math.max(most, ++inFlight);
        await clock.sleepUntil(sendMs + 300);
        inFlight--;
        return { ...(await base.execute(spec)), sendMs, endMs: clock.nowMs() };
      },
    };
    const out = await clock.run(
      runLevel(
        input(specs, prompts(12), {
          plan: {
            concurrency: 2,
            rate: 4,
            maxInFlight: 2,
            inputLen: 100,
            outputLen: 2,
            rounds: 1,
            requestsPerRound: 12,
            warmup: 0,
            turns: 3,
          },
          executor,
          clock,
          wait: (t, s) => (clock as ManualClock).sleepUntil(t, s),
        }),
      ),
    );
    expect(out.measured).toHaveLength(12);
    expect(out.roundsCompleted).toBe(1);
    expect(most).toBe(2);
    const first = out.measured.filter((r) => r.workload?.turn === 0);
    // One schedule time per conversation, none on later turns; sends never precede their schedule.
    expect(first.map((r) => r.scheduledMs !== undefined)).toEqual([true, true, true, true]);
    expect(out.measured.filter((r) => r.workload?.turn !== 0).every((r) => r.scheduledMs === undefined)).toBe(true);
    expect(first.every((r) => r.sendMs >= r.scheduledMs!)).toBe(true);
    const schedule = first.map((r) => r.scheduledMs!);
    expect(schedule).toEqual([...schedule].sort((a, b) => a - b));
    for (let c = 0; c < 4; c++) {
      const turns = out.measured.filter((r) => r.workload?.conversation === c);
      expect(turns.map((r) => r.workload?.turn)).toEqual([0, 1, 2]);
      for (let t = 1; t < 3; t++) expect(turns[t]!.sendMs).toBeGreaterThanOrEqual(turns[t - 1]!.endMs!);
    }
  });
});
