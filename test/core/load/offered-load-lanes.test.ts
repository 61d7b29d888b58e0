import { describe, expect, it } from 'vitest';
import { runConversations } from '../../../src/core/load/conversations.js';
import type { RequestExecutor } from '../../../src/core/load/executor.js';
import type { LevelPlan } from '../../../src/core/load/level-plan.js';
import { runLevel } from '../../../src/core/load/level-runner.js';
import { outcomeToRecord } from '../../../src/core/load/outcome-to-record.js';
import type { Prompt } from '../../../src/core/load/prompts.js';
import { runClosedLoop, runOpenLoop } from '../../../src/core/load/scheduler.js';
import { StreamAccumulator } from '../../../src/core/load/stream-accumulator.js';
import type { RequestOutcome, RequestSpec } from '../../../src/core/load/stream-client.js';
import { summarizeLevel } from '../../../src/core/metrics/level-summary.js';
import { closedLoopInFlight } from '../../../src/shared/offered-load.js';
import type { Check } from '../../../src/shared/run-record.js';
import { levelRunInput } from './level-run-input.js';
import { createManualClock } from './manual-clock.js';
import type { ManualClock } from './manual-clock.js';

interface Wire {
  /** Time on the wire, send to the response's end. */
  wireMs: (id: number) => number;
  /** Parsing the response's reads, after its end. */
  parseMs: number;
  /** The client's own time between execute() and handing the request to the HTTP client. */
  handMs?: number;
  /** Requests the server fails (HTTP 500). */
  fails?: (id: number) => boolean;
  /** An old executor that never says when the response ended on the wire. */
  silent?: boolean;
}

/** An executor on a virtual clock whose requests spend wireMs on the wire and parseMs being parsed after their end. */
function wireExecutor(clock: ManualClock, wire: Wire): { executor: RequestExecutor; sends: Map<number, number> } {
  const sends = new Map<number, number>();
  const executor: RequestExecutor = {
    threads: 0,
    async execute(spec, onEnded) {
      await clock.sleepUntil(clock.nowMs() + (wire.handMs ?? 0));
      const sendMs = clock.nowMs();
      sends.set(spec.id, sendMs);
      await clock.sleepUntil(sendMs + wire.wireMs(spec.id));
      const endMs = clock.nowMs();
      if (!wire.silent) onEnded?.();
      await clock.sleepUntil(endMs + wire.parseMs);
      const failed = wire.fails?.(spec.id) ?? false;
      const acc = new StreamAccumulator({ keepText: spec.keepText });
      if (failed) acc.fail('HTTP 500: overloaded', 'http-500');
      else {
        acc.onEvent(JSON.stringify({ choices: [{ delta: { content: `answer-${spec.id}` } }] }), sendMs + 1);
        acc.onEvent(
          JSON.stringify({
            choices: [{ delta: {}, finish_reason: 'length' }],
            usage: { prompt_tokens: 8, completion_tokens: 1 },
          }),
          endMs,
        );
      }
      const outcome: RequestOutcome = {
        id: spec.id,
        requestTag: spec.requestTag,
        sendMs,
        endMs,
        httpStatus: failed ? 500 : 200,
        result: acc.result(),
      };
      return outcome;
    },
    abortAll: () => undefined,
    startLagWindow: () => undefined,
    endLagWindow: async () => 1,
    close: async () => undefined,
  };
  return { executor, sends };
}

const specs = (n: number): RequestSpec[] =>
  Array.from({ length: n }, (_, id) => ({
    id,
    path: '/v1/chat/completions',
    body: '{}',
    timeoutMs: 1000,
    requestTag: `o-${id}`,
  }));

const prompts = (n: number): Prompt[] => Array.from({ length: n }, (_, i) => ({ text: `p-${i}`, tokens: 8 }));

/** One closed-loop level on the virtual clock, summarized as servebench run does: its client check. */
async function closedLevel(concurrency: number, perRound: number, wire: Wire): Promise<Check> {
  const clock = createManualClock();
  const { executor } = wireExecutor(clock, wire);
  const plan: LevelPlan = { concurrency, inputLen: 8, outputLen: 1, rounds: 2, requestsPerRound: perRound, warmup: 0 };
  const out = await clock.run(runLevel(levelRunInput(plan, prompts(2 * perRound), executor, { clock })));
  const level = summarizeLevel({
    records: out.measured,
    concurrency,
    inputLen: 8,
    outputLen: 1,
    rounds: out.roundsCompleted,
    warmupRequests: 0,
    serverConfigIndex: 0,
    uniquePrefix: true,
    loopLagP99Ms: 1,
  });
  return level.checks.find((c) => c.id === 'client') as Check;
}

describe('closed-loop lanes refill at the wire end', () => {
  it('sends the next request the moment the last one ended, not after its reads were parsed', async () => {
    const clock = createManualClock();
    const { executor, sends } = wireExecutor(clock, { wireMs: () => 10, parseMs: 3 });
    const outcomes = await clock.run(runClosedLoop(specs(12), 4, executor, () => undefined));
    expect([...sends.values()]).toEqual([0, 0, 0, 0, 10, 10, 10, 10, 20, 20, 20, 20]);
    // The outcome still comes after the parsing, with the stamps of the wire.
    expect(outcomes.map((o) => o.endMs - o.sendMs)).toEqual(Array(12).fill(10));
    const held = closedLoopInFlight([outcomes.map((o) => ({ sendMs: o.sendMs, endMs: o.endMs, ok: true }))], 4);
    expect(held?.mean).toBe(4);
  });

  it('an executor that never tells the wire end is still driven, its lanes refilled by the outcome', async () => {
    const clock = createManualClock();
    const { executor, sends } = wireExecutor(clock, { wireMs: () => 10, parseMs: 3, silent: true });
    await clock.run(runClosedLoop(specs(3), 1, executor, () => undefined));
    expect([...sends.values()]).toEqual([0, 13, 26]);
  });

  it('a good client passes the client check with the asked concurrency as its facts', async () => {
    const check = await closedLevel(4, 16, { wireMs: () => 10, parseMs: 3 });
    expect(check.status).toBe('pass');
    expect(check.code).toBe('kept-up');
    expect(check.facts).toMatchObject({ achievedConcurrency: 4, achievedConcurrencyP5: 4, askedConcurrency: 4 });
  });

  it('the drain at the end of a round does not fail a good client', async () => {
    // The last request of each round runs 100 times longer: for most of the round's span the other lanes are idle.
    const check = await closedLevel(4, 8, { wireMs: (id) => (id % 8 === 7 ? 1000 : 10), parseMs: 3 });
    expect(check.status).toBe('pass');
    expect(check.facts).toMatchObject({ achievedConcurrency: 4 });
  });

  it('a client slower than the server fails the check, saying how much it offered', async () => {
    // 10 ms of the client's own work before each send, 10 ms on the wire: half the time a lane is idle.
    const check = await closedLevel(4, 16, { wireMs: () => 10, parseMs: 0, handMs: 10 });
    expect(check.status).toBe('fail');
    expect(check.code).toBe('offered-below-asked');
    expect(check.facts?.askedConcurrency).toBe(4);
    expect(check.facts?.achievedConcurrency as number).toBeLessThan(0.95 * 4);
    expect(check.facts?.ratio).toBeCloseTo((check.facts?.achievedConcurrency as number) / 4, 12);
  });

  it('a server failing requests fast is not blamed on the client', async () => {
    // Three of four requests fail in 0.1 ms; 1 ms of the client's own work before every send.
    const check = await closedLevel(2, 16, {
      wireMs: (id) => (id % 4 === 0 ? 10 : 0.1),
      parseMs: 0,
      handMs: 1,
      fails: (id) => id % 4 !== 0,
    });
    expect(check.status).toBe('warn');
    expect(check.code).toBe('offered-below-asked-failures');
    expect(check.facts?.shortfallAfterFailures as number).toBeGreaterThanOrEqual(0.5);
  });
});

describe('open loop and conversations free their slot at the wire end', () => {
  it('under a cap the next request leaves when the last ended on the wire, and the cap, not the client, is named', async () => {
    const clock = createManualClock();
    const { executor, sends } = wireExecutor(clock, { wireMs: () => 50, parseMs: 3 });
    const outcomes = await clock.run(
      runOpenLoop(
        specs(6),
        [0, 10, 20, 30, 40, 50],
        1,
        executor,
        clock,
        () => undefined,
        undefined,
        (t, s) => clock.sleepUntil(t, s),
      ),
    );
    expect([...sends.values()]).toEqual([5, 55, 105, 155, 205, 255]);
    const records = outcomes.map((o) => outcomeToRecord(o, { levelIndex: 0, round: 0, expectedIn: 8, expectedOut: 1 }));
    const level = summarizeLevel({
      records,
      concurrency: 1,
      rate: 100,
      maxInFlight: 1,
      inputLen: 8,
      outputLen: 1,
      rounds: 1,
      warmupRequests: 0,
      serverConfigIndex: 0,
      uniquePrefix: true,
      loopLagP99Ms: 1,
    });
    const client = level.checks.find((c) => c.id === 'client')!;
    expect(client.status).toBe('warn');
    expect(client.code).toBe('rate-held-by-cap');
    expect(level.offered).toMatchObject({ heldByCap: 5, scheduledRatePerSec: 100, ratePerSec: 20 });
    // The lag the cap caused is not the client's: only the first send's (0 ms) is judged.
    expect(client.facts?.scheduleLagP99Ms).toBe(0);
  });

  it('a conversation waits for the parsed answer between its turns, and its lane takes the next at the wire end', async () => {
    const clock = createManualClock();
    const { executor, sends } = wireExecutor(clock, { wireMs: () => 10, parseMs: 3 });
    let nextId = 0;
    const outcomes = await clock.run(
      runConversations({
        userPrompts: prompts(4),
        turns: 2,
        concurrency: 1,
        firstConversation: 0,
        makeSpec: (_prompt, keepText) => ({ ...specs(1)[0]!, id: nextId++, keepText }),
        executor,
        onOutcome: () => undefined,
      }),
    );
    // Turn 2 after turn 1's parse (13); the next conversation at turn 2's wire end (23), not after its parse.
    expect([...sends.values()]).toEqual([0, 13, 23, 36]);
    expect(outcomes).toHaveLength(4);
  });
});
