import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import type { LevelPlan } from '../../../src/core/load/level-plan.js';
import { FULL_COMPAT } from '../../../src/core/load/request-body.js';
import { ServerApi } from '../../../src/core/load/server-api.js';
import { buildLevelPrompts } from '../../../src/core/workloads/level-prompts.js';

const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  await Promise.all(cleanups.map((c) => c()));
});

interface HungServer {
  url: string;
  /** Resolves once the first hung /tokenize has reached the server. */
  firstHung: Promise<void>;
  /** Resolves once every hung request so far was closed by the client. */
  allClosed: () => Promise<void>;
  hungCount: () => number;
}

/** A vLLM-style /tokenize that answers a word count, except for bodies `hangs` picks: those it never answers. */
async function startHungTokenize(hangs: (body: Record<string, unknown>, n: number) => boolean): Promise<HungServer> {
  const closed: Array<Promise<void>> = [];
  let calls = 0;
  let seen: () => void = () => undefined;
  const firstHung = new Promise<void>((resolve) => (seen = resolve));
  const server = createServer((req: IncomingMessage, res) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (d: string) => (text += d));
    req.on('end', () => {
      const body = JSON.parse(text) as Record<string, unknown>;
      if (hangs(body, ++calls)) {
        closed.push(new Promise<void>((resolve) => res.on('close', () => resolve())));
        seen();
        return;
      }
      const words = JSON.stringify(body.messages ?? body.prompt).split(/\s+/).length;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ count: words + 3, max_model_len: 4096 }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    firstHung,
    allClosed: async () => {
      await Promise.all(closed);
    },
    hungCount: () => closed.length,
  };
}

const plan: LevelPlan = { concurrency: 2, inputLen: 200, outputLen: 8, rounds: 1, requestsPerRound: 4, warmup: 0 };

/**
 * Builds a shared-prefix level on the server (an hour's --timeout), cancels it once a count hangs, and reports whether
 * the building had settled before the cancel and what it returned.
 */
async function cancelWhileHung(
  api: 'chat' | 'completions',
  s: HungServer,
): Promise<{ early: boolean; prompts: unknown[] }> {
  const counting = await new ServerApi({ baseUrl: s.url, timeoutMs: 3_600_000 }).tokenCounter(api, 'm', FULL_COMPAT);
  const abort = new AbortController();
  let settled = false;
  const building = buildLevelPrompts({
    workload: { kind: 'shared-prefix', groups: 2, prefixLen: 100 },
    plan,
    count: 4,
    runNonce: 7,
    firstIndex: 0,
    uniquePrefix: true,
    counter: counting.counter,
    viaTokenize: counting.viaTokenize,
    countMessages: counting.countMessages ?? null,
    api,
    parallel: 2,
    signal: abort.signal,
  }).finally(() => (settled = true));
  await s.firstHung;
  // A few event-loop turns: the building must still be waiting on the hung count, not done or failed.
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
  const early = settled;
  abort.abort();
  const prompts = await building;
  // The counts were given up, not left open until the server answers.
  await s.allClosed();
  return { early, prompts };
}

describe('shared-prefix prompts on a hung /tokenize', () => {
  it('chat: a cancel stops the per-prompt message counts at once, and the level comes back to be dropped', async () => {
    // Answers the probe and the system prompts' counts; hangs every count of a whole prompt (a system message).
    const s = await startHungTokenize(
      (body) => (body.messages as Array<{ role: string }> | undefined)?.some((m) => m.role === 'system') ?? false,
    );
    const { early, prompts } = await cancelWhileHung('chat', s);
    expect(early).toBe(false);
    expect(s.hungCount()).toBeGreaterThan(0);
    // No prompt was completed: every slot is a hole the caller drops with the cancelled level.
    expect(prompts.filter((p) => p !== undefined)).toEqual([]);
  });

  it('completions: a cancel stops the template-overhead count at once', async () => {
    // Answers the probe only: the next count (the overhead of an empty text) hangs.
    const s = await startHungTokenize((_body, n) => n > 1);
    const { early, prompts } = await cancelWhileHung('completions', s);
    expect(early).toBe(false);
    expect(s.hungCount()).toBe(1);
    expect(prompts).toEqual([]);
  });
});
