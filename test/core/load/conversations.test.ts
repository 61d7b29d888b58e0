import { describe, expect, it } from 'vitest';
import { runConversations, uncountedTurn } from '../../../src/core/load/conversations.js';
import type { RequestExecutor } from '../../../src/core/load/executor.js';
import type { Prompt, PromptMessage } from '../../../src/core/load/prompts.js';
import { StreamAccumulator } from '../../../src/core/load/stream-accumulator.js';
import type { RequestOutcome, RequestSpec } from '../../../src/core/load/stream-client.js';
import { createManualClock } from './manual-clock.js';
import type { ManualClock } from './manual-clock.js';

interface Sent {
  id: number;
  prompt: Prompt;
  keepText: boolean;
  atMs: number;
  endMs: number;
  inFlight: number;
}

/**
 * Runs conversations on a virtual clock. Each request takes `durationMs(id)`, answers `answer-<id>` (only when the
 * spec asked to keep text, as the real client does), and fails where `fails(id)` says.
 */
function harness(clock: ManualClock, durationMs: (id: number) => number, fails: (id: number) => boolean = () => false) {
  const sent: Sent[] = [];
  const byId = new Map<number, Prompt>();
  let inFlight = 0;
  let nextId = 0;
  const executor: RequestExecutor = {
    threads: 0,
    async execute(spec: RequestSpec) {
      const sendMs = clock.nowMs();
      inFlight++;
      const entry: Sent = {
        id: spec.id,
        prompt: byId.get(spec.id)!,
        keepText: spec.keepText === true,
        atMs: sendMs,
        endMs: -1,
        inFlight,
      };
      sent.push(entry);
      await clock.sleepUntil(sendMs + durationMs(spec.id));
      inFlight--;
      entry.endMs = clock.nowMs();
      const acc = new StreamAccumulator({ keepText: spec.keepText });
      if (fails(spec.id)) acc.fail('HTTP 500', 'http-5xx');
      else {
        acc.onEvent(JSON.stringify({ choices: [{ delta: { content: `answer-${spec.id}` } }] }), entry.endMs);
        acc.onEvent(JSON.stringify({ choices: [{ delta: {}, finish_reason: 'length' }] }), entry.endMs);
      }
      const outcome: RequestOutcome = {
        id: spec.id,
        requestTag: spec.requestTag,
        sendMs,
        endMs: entry.endMs,
        httpStatus: fails(spec.id) ? 500 : 200,
        result: acc.result(),
      };
      return outcome;
    },
    abortAll: () => undefined,
    startLagWindow: () => undefined,
    endLagWindow: async () => null,
    close: async () => undefined,
  };
  const makeSpec = (prompt: Prompt, keepText: boolean): RequestSpec => {
    const id = nextId++;
    byId.set(id, prompt);
    return { id, path: '/v1/chat/completions', body: '{}', timeoutMs: 1000, requestTag: `t-${id}`, keepText };
  };
  return { sent, executor, makeSpec };
}

const users = (n: number): Prompt[] => Array.from({ length: n }, (_, i) => ({ text: `user-${i}`, tokens: 10 }));

/** Counts a history as the simulator would: 10 per user message, 1 per answer, 4 per message, 4 per prompt. */
const countMessages = async (messages: readonly PromptMessage[]): Promise<number> =>
  4 + messages.reduce((a, m) => a + 4 + (m.role === 'user' ? 10 : 1), 0);

describe('runConversations', () => {
  it('keeps c conversations in flight, sends turn t+1 after turn t, and carries the actual answers', async () => {
    const clock = createManualClock();
    // Uneven durations, so conversations finish out of order.
    const h = harness(clock, (id) => 10 + ((id * 7) % 5) * 10);
    const outcomes = await clock.run(
      runConversations({
        userPrompts: users(12),
        turns: 3,
        concurrency: 2,
        firstConversation: 5,
        makeSpec: h.makeSpec,
        executor: h.executor,
        onOutcome: () => undefined,
        countMessages,
      }),
    );
    expect(outcomes).toHaveLength(12);
    expect(Math.max(...h.sent.map((s) => s.inFlight))).toBe(2);
    const conversations = new Map<number, Sent[]>();
    for (const s of h.sent) {
      const c = s.prompt.meta!.conversation!;
      conversations.set(c, [...(conversations.get(c) ?? []), s]);
    }
    expect([...conversations.keys()].sort()).toEqual([5, 6, 7, 8]);
    for (const [c, turns] of conversations) {
      const local = c - 5;
      expect(turns.map((s) => s.prompt.meta!.turn)).toEqual([0, 1, 2]);
      for (let t = 1; t < 3; t++) expect(turns[t]!.atMs).toBeGreaterThanOrEqual(turns[t - 1]!.endMs);
      // The last turn's history: each earlier user message followed by the server's answer to it.
      expect(turns[2]!.prompt.messages).toEqual([
        { role: 'user', content: `user-${local * 3}` },
        { role: 'assistant', content: `answer-${turns[0]!.id}` },
        { role: 'user', content: `user-${local * 3 + 1}` },
        { role: 'assistant', content: `answer-${turns[1]!.id}` },
        { role: 'user', content: `user-${local * 3 + 2}` },
      ]);
      expect(turns.map((s) => s.keepText)).toEqual([true, true, false]);
      // Expected input grows with the history; the first turn keeps the level's (calibrated) length.
      expect(turns.map((s) => s.prompt.inputLen)).toEqual([undefined, 4 + 14 + 5 + 14, 4 + 2 * (14 + 5) + 14]);
      expect(turns.map((s) => uncountedTurn(s.prompt))).toEqual([false, false, false]);
    }
  });

  it('pauses the think time between turns, and only there', async () => {
    const clock = createManualClock();
    const h = harness(clock, () => 10);
    await clock.run(
      runConversations({
        userPrompts: users(2),
        turns: 2,
        concurrency: 1,
        firstConversation: 0,
        makeSpec: h.makeSpec,
        executor: h.executor,
        onOutcome: () => undefined,
        thinkTimeMs: 100,
        sleep: (ms, signal) => clock.sleepUntil(clock.nowMs() + ms, signal),
      }),
    );
    expect(h.sent.map((s) => [s.atMs, s.endMs])).toEqual([
      [0, 10],
      [110, 120],
    ]);
  });

  it('ends a conversation at a failed turn and marks later turns uncounted without a counter', async () => {
    const clock = createManualClock();
    const h = harness(
      clock,
      () => 10,
      (id) => id === 1,
    );
    const outcomes = await clock.run(
      runConversations({
        userPrompts: users(6),
        turns: 3,
        concurrency: 1,
        firstConversation: 0,
        makeSpec: h.makeSpec,
        executor: h.executor,
        onOutcome: () => undefined,
      }),
    );
    // Conversation 0 stops after its failed turn 1; conversation 1 runs whole.
    expect(outcomes).toHaveLength(5);
    expect(h.sent.map((s) => [s.prompt.meta!.conversation, s.prompt.meta!.turn])).toEqual([
      [0, 0],
      [0, 1],
      [1, 0],
      [1, 1],
      [1, 2],
    ]);
    expect(h.sent.map((s) => uncountedTurn(s.prompt))).toEqual([false, true, false, true, true]);
  });

  it('sends nothing more once the signal fires', async () => {
    const clock = createManualClock();
    const abort = new AbortController();
    const h = harness(clock, () => 10);
    const outcomes = await clock.run(
      runConversations({
        userPrompts: users(6),
        turns: 3,
        concurrency: 2,
        firstConversation: 0,
        makeSpec: h.makeSpec,
        executor: h.executor,
        onOutcome: () => abort.abort(),
        signal: abort.signal,
      }),
    );
    expect(outcomes).toHaveLength(2);
    expect(h.sent.every((s) => s.prompt.meta!.turn === 0)).toBe(true);
  });

  it('ends a conversation at a failed turn and reports its later turns as skipped, so sent + skipped is every turn', async () => {
    const clock = createManualClock();
    // id 0: conversation 0's first turn; id 2: conversation 1's second turn.
    const h = harness(
      clock,
      () => 10,
      (id) => id === 0 || id === 2,
    );
    const seen: Array<[number, number, boolean, number]> = [];
    const outcomes = await clock.run(
      runConversations({
        userPrompts: users(9),
        turns: 3,
        concurrency: 1,
        firstConversation: 0,
        makeSpec: h.makeSpec,
        executor: h.executor,
        onOutcome: (o, skipped) => seen.push([o.id, byTurn(h.sent, o.id), o.httpStatus === 200, skipped]),
      }),
    );
    expect(seen).toEqual([
      [0, 0, false, 2],
      [1, 0, true, 0],
      [2, 1, false, 1],
      [3, 0, true, 0],
      [4, 1, true, 0],
      [5, 2, true, 0],
    ]);
    expect(outcomes).toHaveLength(6);
    expect(outcomes.length + seen.reduce((a, s) => a + s[3], 0)).toBe(9);
  });

  it('counts no skipped turns when a cancel ends the conversation', async () => {
    const clock = createManualClock();
    const abort = new AbortController();
    const h = harness(
      clock,
      () => 10,
      () => true,
    );
    const skipped: number[] = [];
    void clock.sleepUntil(8).then(() => abort.abort());
    await clock.run(
      runConversations({
        userPrompts: users(3),
        turns: 3,
        concurrency: 1,
        firstConversation: 0,
        makeSpec: h.makeSpec,
        executor: h.executor,
        onOutcome: (_, n) => skipped.push(n),
        signal: abort.signal,
      }),
    );
    expect(skipped).toEqual([0]);
  });

  it('gives up a history count that hangs once the signal fires (a cancel does not wait for the server)', async () => {
    const clock = createManualClock();
    const abort = new AbortController();
    const h = harness(clock, () => 10);
    const asked: Array<AbortSignal | undefined> = [];
    // A hung /tokenize: the count ends only when its signal fires.
    const hungCount = (_: readonly PromptMessage[], signal?: AbortSignal): Promise<number | null> => {
      asked.push(signal);
      return new Promise((_resolve, reject) => signal?.addEventListener('abort', () => reject(new Error('cancelled'))));
    };
    void clock.sleepUntil(15).then(() => abort.abort());
    const outcomes = await clock.run(
      runConversations({
        userPrompts: users(3),
        turns: 3,
        concurrency: 1,
        firstConversation: 0,
        makeSpec: h.makeSpec,
        executor: h.executor,
        onOutcome: () => undefined,
        countMessages: hungCount,
        signal: abort.signal,
      }),
    );
    expect(outcomes).toHaveLength(2);
    expect(asked).toEqual([abort.signal]);
  });

  it('a failed history count is told once and the tokenizer is not asked again: later turns keep no count', async () => {
    const clock = createManualClock();
    const h = harness(clock, () => 10);
    let asked = 0;
    const reasons: string[] = [];
    // The first count fails (a time-out, say); a tokenizer that answered again would be a fluke, not a count to trust.
    const failingCount = async (messages: readonly PromptMessage[]): Promise<number | null> => {
      asked++;
      if (asked === 1) throw new Error('POST /apply-template gave no complete answer within 2 s (--timeout)');
      return countMessages(messages);
    };
    const outcomes = await clock.run(
      runConversations({
        userPrompts: users(6),
        turns: 3,
        concurrency: 1,
        firstConversation: 0,
        makeSpec: h.makeSpec,
        executor: h.executor,
        onOutcome: () => undefined,
        countMessages: failingCount,
        onCountFailed: (reason) => reasons.push(reason),
      }),
    );
    expect(outcomes).toHaveLength(6);
    expect(reasons).toEqual(['POST /apply-template gave no complete answer within 2 s (--timeout)']);
    expect(asked).toBe(1);
    const later = h.sent.filter((s) => s.prompt.meta!.turn! > 0);
    expect(later).toHaveLength(4);
    expect(later.every((s) => uncountedTurn(s.prompt))).toBe(true);
  });

  it('a count the server cannot give (null) is told as such, once', async () => {
    const clock = createManualClock();
    const h = harness(clock, () => 10);
    const reasons: string[] = [];
    await clock.run(
      runConversations({
        userPrompts: users(4),
        turns: 2,
        concurrency: 2,
        firstConversation: 0,
        makeSpec: h.makeSpec,
        executor: h.executor,
        onOutcome: () => undefined,
        countMessages: async () => null,
        onCountFailed: (reason) => reasons.push(reason),
      }),
    );
    expect(reasons).toEqual(['the server gave no count']);
  });
});

/** The turn of the request with this id. */
function byTurn(sent: readonly Sent[], id: number): number {
  return sent.find((s) => s.id === id)!.prompt.meta!.turn!;
}

/** Each conversation's requests, in the order sent. */
function byConversation(sent: readonly Sent[]): Map<number, Sent[]> {
  const out = new Map<number, Sent[]>();
  for (const s of sent) {
    const c = s.prompt.meta!.conversation!;
    out.set(c, [...(out.get(c) ?? []), s]);
  }
  return out;
}

describe('runConversations in the open loop', () => {
  it('starts each conversation at its arrival (not after the previous one ended) and runs its turns in order', async () => {
    const clock = createManualClock();
    const h = harness(clock, () => 50);
    const outcomes = await clock.run(
      runConversations({
        userPrompts: users(9),
        turns: 3,
        concurrency: 0,
        arrivals: { offsetsMs: [0, 20, 400], clock, wait: (t, s) => clock.sleepUntil(t, s) },
        firstConversation: 0,
        makeSpec: h.makeSpec,
        executor: h.executor,
        onOutcome: () => undefined,
        thinkTimeMs: 5,
        sleep: (ms, signal) => clock.sleepUntil(clock.nowMs() + ms, signal),
      }),
    );
    expect(outcomes).toHaveLength(9);
    const conversations = byConversation(h.sent);
    // The schedule starts 5 ms after now (as runOpenLoop's); turn t+1 follows turn t's end and the think time.
    expect([...conversations.values()].map((turns) => turns.map((s) => s.atMs))).toEqual([
      [5, 60, 115],
      [25, 80, 135],
      [405, 460, 515],
    ]);
    // Conversations 0 and 1 overlap: arrivals do not wait for earlier conversations.
    expect(Math.max(...h.sent.map((s) => s.inFlight))).toBe(2);
    for (const turns of conversations.values()) {
      expect(turns.map((s) => s.prompt.meta!.turn)).toEqual([0, 1, 2]);
      expect(turns[2]!.prompt.messages).toHaveLength(5);
    }
    // Only a conversation's first turn has a schedule; sent on time, its lag is 0.
    const scheduled = outcomes.filter((o) => o.scheduledMs !== undefined);
    expect(scheduled.map((o) => [byTurn(h.sent, o.id), o.scheduledMs, o.sendMs - o.scheduledMs!])).toEqual([
      [0, 5, 0],
      [0, 25, 0],
      [0, 405, 0],
    ]);
  });

  it('caps turns in flight at maxInFlight, first come first served, and records the first turns’ lag', async () => {
    const clock = createManualClock();
    const h = harness(clock, () => 10);
    const outcomes = await clock.run(
      runConversations({
        userPrompts: users(8),
        turns: 2,
        concurrency: 0,
        arrivals: { offsetsMs: [0, 0, 0, 0], maxInFlight: 2, clock, wait: (t, s) => clock.sleepUntil(t, s) },
        firstConversation: 0,
        makeSpec: h.makeSpec,
        executor: h.executor,
        onOutcome: () => undefined,
      }),
    );
    expect(outcomes).toHaveLength(8);
    expect(Math.max(...h.sent.map((s) => s.inFlight))).toBe(2);
    // Conversations 2 and 3 arrive at 5 but find both slots taken by 0 and 1; their second turns queue behind them.
    expect([...byConversation(h.sent).values()].map((turns) => turns.map((s) => s.atMs))).toEqual([
      [5, 25],
      [5, 25],
      [15, 35],
      [15, 35],
    ]);
    const lags = outcomes
      .filter((o) => o.scheduledMs !== undefined)
      .sort((a, b) => a.sendMs - b.sendMs)
      .map((o) => o.sendMs - o.scheduledMs!);
    expect(lags).toEqual([0, 0, 10, 10]);
  });

  it('stops starting conversations once the signal fires, and finishes the turns in flight', async () => {
    const clock = createManualClock();
    const abort = new AbortController();
    const h = harness(clock, () => 10);
    const outcomes = await clock.run(
      runConversations({
        userPrompts: users(6),
        turns: 2,
        concurrency: 0,
        arrivals: { offsetsMs: [0, 100, 200], clock, wait: (t, s) => clock.sleepUntil(t, s) },
        firstConversation: 0,
        makeSpec: h.makeSpec,
        executor: h.executor,
        onOutcome: (o) => {
          if (o.id === 0) abort.abort();
        },
        signal: abort.signal,
      }),
    );
    expect(outcomes.map((o) => o.id)).toEqual([0]);
    expect(h.sent).toHaveLength(1);
  });
});
