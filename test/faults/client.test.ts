import { afterEach, describe, expect, it } from 'vitest';
import { createMonoClock } from '../../src/core/clock.js';
import { isUserError } from '../../src/core/errors.js';
import { createInThreadExecutor } from '../../src/core/load/executor.js';
import type { LevelPlan } from '../../src/core/load/level-plan.js';
import { runLevel } from '../../src/core/load/level-runner.js';
import { buildPrompts } from '../../src/core/load/prompts.js';
import { FULL_COMPAT, buildRequestBody } from '../../src/core/load/request-body.js';
import { ServerApi } from '../../src/core/load/server-api.js';
import { createStreamClient } from '../../src/core/load/stream-client.js';
import type { RequestOutcome, RequestSpec } from '../../src/core/load/stream-client.js';
import type { RequestRecord } from '../../src/shared/request-record.js';
import { startHostileServer } from '../fakes/hostile-server.js';
import type { HostileMode } from '../fakes/hostile-server.js';
import { startLlamaCppLike } from '../fakes/llamacpp-like-server.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

const MODEL = 'llama-like.gguf';

function spec(id = 1, extra: Partial<RequestSpec> = {}): RequestSpec {
  return {
    id,
    path: '/v1/chat/completions',
    body: buildRequestBody({
      api: 'chat',
      model: MODEL,
      prompt: 'one two three',
      outputLen: 8,
      ignoreEos: true,
      temperature: 0,
      stream: true,
      compat: FULL_COMPAT,
    }),
    timeoutMs: 60_000,
    requestTag: `t-${id}`,
    ...extra,
  };
}

async function hostile(mode: HostileMode, options: { endlessBytes?: number } = {}) {
  const server = await startHostileServer(mode, options);
  const client = createStreamClient({ baseUrl: server.url, clock: createMonoClock() });
  cleanups.push(() => server.close());
  cleanups.push(() => client.close());
  return { server, client };
}

/** Runs one closed-loop level against the llama.cpp stand-in, with prompts calibrated through its /tokenize. */
async function llamaLevel(concurrency: number): Promise<{ records: RequestRecord[]; closed: number }> {
  const server = await startLlamaCppLike({ slots: 4, nCtx: 4096 });
  cleanups.push(() => server.close());
  const clock = createMonoClock();
  const api = new ServerApi({ baseUrl: server.url, timeoutMs: 60_000 });
  const { compat } = await api.probeCompat('chat', MODEL);
  const { counter, viaTokenize } = await api.tokenCounter('chat', MODEL, compat);
  expect(viaTokenize).toBe(true);
  const plan: LevelPlan = {
    concurrency,
    inputLen: 64,
    outputLen: 24,
    rounds: 2,
    requestsPerRound: Math.max(8, concurrency),
    warmup: concurrency,
  };
  const prompts = await buildPrompts({
    count: plan.warmup + plan.rounds * plan.requestsPerRound,
    targetTokens: plan.inputLen,
    runNonce: 7,
    firstIndex: 0,
    uniquePrefix: true,
    counter,
    verifyEach: viaTokenize,
  });
  const executor = createInThreadExecutor({ baseUrl: server.url, clock });
  cleanups.push(() => executor.close());
  const out = await runLevel({
    plan,
    levelIndex: 0,
    prompts,
    executor,
    clock,
    model: MODEL,
    api: 'chat',
    compat,
    ignoreEos: true,
    temperature: 0,
    timeoutMs: 120_000,
    seed: 1,
    firstId: 0,
    tagPrefix: 'run',
    signal: new AbortController().signal,
    onEvent: () => {},
    onRecords: () => {},
  });
  return { records: [...out.warmup, ...out.measured], closed: server.closedAfterStream };
}

function failures(records: RequestRecord[]): string[] {
  return records.filter((r) => !r.ok).map((r) => `${r.errorKind}: ${r.error}`);
}

describe('client against llama.cpp behaviour', () => {
  for (const c of [1, 16, 64, 256]) {
    it(`llama.cpp closes the socket after every stream (c=${c}): 0 failed requests, prompts of exactly the asked size`, async () => {
      const { records, closed } = await llamaLevel(c);
      expect(closed).toBeGreaterThan(0);
      expect(failures(records)).toEqual([]);
      expect(records).toHaveLength(c + 2 * Math.max(8, c));
      expect(records.every((r) => r.nIn === 64 && r.nOut === 24 && r.nOutSource === 'server')).toBe(true);
    });
  }
});
