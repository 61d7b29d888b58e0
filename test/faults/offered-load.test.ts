import { afterEach, describe, expect, it } from 'vitest';
import { createMonoClock } from '../../src/core/clock.js';
import { createInThreadExecutor } from '../../src/core/load/executor.js';
import type { RequestExecutor } from '../../src/core/load/executor.js';
import type { LevelPlan } from '../../src/core/load/level-plan.js';
import { runLevel } from '../../src/core/load/level-runner.js';
import { FULL_COMPAT, buildRequestBody } from '../../src/core/load/request-body.js';
import { runClosedLoop } from '../../src/core/load/scheduler.js';
import type { RequestSpec } from '../../src/core/load/stream-client.js';
import { createWorkerExecutor, resolveWorkerScript } from '../../src/core/load/worker-executor.js';
import { summarizeLevel } from '../../src/core/metrics/level-summary.js';
import { startFakeOpenAi } from '../fakes/fake-openai-server.js';
import { levelRunInput } from '../core/load/level-run-input.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

const spec = (id: number): RequestSpec => ({
  id,
  path: '/v1/chat/completions',
  body: buildRequestBody({
    api: 'chat',
    model: 'fake-model',
    prompt: 'one two three',
    outputLen: 64,
    ignoreEos: true,
    temperature: 0,
    stream: true,
    compat: FULL_COMPAT,
  }),
  timeoutMs: 30_000,
  requestTag: `ol-${id}`,
});

/** Wraps an executor to log, in order, each request's hand-over, its wire end and its parsed outcome. */
function logged(executor: RequestExecutor): { executor: RequestExecutor; log: string[] } {
  const log: string[] = [];
  return {
    log,
    executor: {
      ...executor,
      threads: executor.threads,
      execute: (s, onEnded) => {
        log.push(`send ${s.id}`);
        return executor
          .execute(s, () => {
            log.push(`ended ${s.id}`);
            onEnded?.();
          })
          .then((o) => {
            log.push(`parsed ${s.id}`);
            return o;
          });
      },
    },
  };
}

/** c=1 against a real server: request k+1 must leave after k ended on the wire and before k's reads were parsed. */
async function refillOrder(make: (url: string) => RequestExecutor): Promise<string[]> {
  const server = await startFakeOpenAi({});
  cleanups.push(() => server.close());
  const base = make(server.url);
  cleanups.push(() => base.close());
  const { executor, log } = logged(base);
  const outcomes = await runClosedLoop([0, 1, 2, 3, 4].map(spec), 1, executor, () => undefined);
  // Every read still stamped and counted: the outcome is whole.
  expect(outcomes.every((o) => o.result.error === null && o.result.completionTokens === 64)).toBe(true);
  expect(outcomes.every((o) => o.result.chunks.length === 64 && (o.result.firstTokenMs as number) >= o.sendMs)).toBe(
    true,
  );
  return log;
}

function expectRefilledAtWireEnd(log: readonly string[]): void {
  for (let k = 0; k < 4; k++) {
    const ended = log.indexOf(`ended ${k}`);
    const next = log.indexOf(`send ${k + 1}`);
    const parsed = log.indexOf(`parsed ${k}`);
    expect(ended, log.join(', ')).toBeLessThan(next);
    expect(next, log.join(', ')).toBeLessThan(parsed);
  }
}

describe('closed-loop lanes are refilled at the wire end, not after parsing', () => {
  it('in-thread: the next request leaves before the last response is parsed', async () => {
    const log = await refillOrder((url) => createInThreadExecutor({ baseUrl: url, clock: createMonoClock() }));
    expectRefilledAtWireEnd(log);
  });

  it('worker threads: the worker says "ended on the wire" before "done", and the lane refills on the first', async () => {
    expect(resolveWorkerScript(), 'npm run build:cli builds dist/load-worker.js').not.toBeNull();
    const log = await refillOrder((url) =>
      createWorkerExecutor({ baseUrl: url, clock: createMonoClock(), workers: 2 }),
    );
    expectRefilledAtWireEnd(log);
  });

  it('a server refusing every request at once is named as failing fast, never as a client that offered too little', async () => {
    const server = await startFakeOpenAi({ status: 503 });
    cleanups.push(() => server.close());
    const clock = createMonoClock();
    const executor = createInThreadExecutor({ baseUrl: server.url, clock });
    cleanups.push(() => executor.close());
    const plan: LevelPlan = { concurrency: 4, inputLen: 8, outputLen: 8, rounds: 1, requestsPerRound: 64, warmup: 0 };
    const prompts = Array.from({ length: 64 }, (_, i) => ({ text: `p ${i}`, tokens: 8 }));
    const out = await runLevel(levelRunInput(plan, prompts, executor, { clock }));
    const level = summarizeLevel({
      records: out.measured,
      concurrency: 4,
      inputLen: 8,
      outputLen: 8,
      rounds: out.roundsCompleted,
      warmupRequests: 0,
      serverConfigIndex: 0,
      uniquePrefix: true,
      loopLagP99Ms: 1,
    });
    expect(level.failed).toBe(64);
    expect(level.checks.find((c) => c.id === 'errors')?.status).toBe('fail');
    const client = level.checks.find((c) => c.id === 'client')!;
    expect(client.code).not.toBe('offered-below-asked');
    expect(level.offered?.inFlightMean).toBeGreaterThan(0);
    if (client.status !== 'pass') {
      expect(client.code).toBe('offered-below-asked-failures');
      expect(client.facts?.shortfallAfterFailures as number).toBeGreaterThanOrEqual(0.5);
    }
  });
});
