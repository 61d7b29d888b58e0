import { afterEach, describe, expect, it } from 'vitest';
import { createMonoClock } from '../../../src/core/clock.js';
import { createWorkerExecutor, resolveWorkerScript } from '../../../src/core/load/worker-executor.js';
import { FULL_COMPAT, buildRequestBody } from '../../../src/core/load/request-body.js';
import type { RequestSpec } from '../../../src/core/load/stream-client.js';
import { startFakeOpenAi } from '../../fakes/fake-openai-server.js';
import type { FakeOpenAiServer } from '../../fakes/fake-openai-server.js';

let server: FakeOpenAiServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

const spec = (id: number): RequestSpec => ({
  id,
  path: '/v1/chat/completions',
  body: buildRequestBody({
    api: 'chat',
    model: 'fake-model',
    prompt: 'a b c',
    outputLen: 5,
    ignoreEos: true,
    temperature: 0,
    stream: true,
    compat: FULL_COMPAT,
  }),
  timeoutMs: 10_000,
  requestTag: `w-${id}`,
});

describe('worker executor', () => {
  it('runs streams on worker threads with timestamps on the shared clock, and reports their loop lag', async () => {
    const script = resolveWorkerScript();
    expect(script, 'npm run build:cli builds dist/load-worker.js').not.toBeNull();
    server = await startFakeOpenAi({});
    const clock = createMonoClock();
    const before = clock.nowMs();
    const exec = createWorkerExecutor({ baseUrl: server.url, clock, workers: 2 });
    exec.startLagWindow();
    const outcomes = await Promise.all([1, 2, 3, 4].map((id) => exec.execute(spec(id))));
    const lag = await exec.endLagWindow();
    await exec.close();
    const after = clock.nowMs();
    for (const o of outcomes) {
      expect(o.result.error).toBeNull();
      expect(o.result.completionTokens).toBe(5);
      expect(o.sendMs).toBeGreaterThanOrEqual(before);
      expect(o.endMs).toBeLessThanOrEqual(after);
    }
    expect(lag === null || lag >= 0).toBe(true);
  });

  it('ends the requests of a worker that dies as client errors instead of hanging', async () => {
    const exec = createWorkerExecutor({
      baseUrl: 'http://127.0.0.1:9',
      clock: createMonoClock(),
      workers: 1,
      script: new URL('../../fakes/dying-worker.mjs', import.meta.url).pathname,
    });
    const outcome = await exec.execute(spec(1));
    expect(outcome.result.errorKind).toBe('client-error');
    expect(outcome.result.error).toMatch(/load worker exited/);
    const next = await exec.execute(spec(2));
    expect(next.result.error).toMatch(/no load worker is alive/);
    await exec.close();
  });
});
