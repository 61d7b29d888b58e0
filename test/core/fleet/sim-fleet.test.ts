import { afterEach, describe, expect, it } from 'vitest';
import { resetPrefixCache } from '../../../src/core/run/cache-reset.js';
import { engineFor } from '../../../src/core/servers/engines/index.js';
import { groupBreakdown } from '../../../src/core/metrics/group-breakdown.js';
import type { RequestRecord } from '../../../src/shared/request-record.js';
import { closeAll, postJson, startSim, testProfile } from '../sim/helpers.js';

afterEach(closeAll);

const signal = new AbortController().signal;

describe('the simulator serves LoRA adapters and resets its cache', () => {
  it('lists each adapter under the base model and answers a request naming one', async () => {
    const sim = await startSim({ profile: testProfile({ instant: true }), adapters: ['a', 'b'] });
    const models = (await (await fetch(`${sim.url}/v1/models`)).json()) as {
      data: Array<{ id: string; parent: unknown }>;
    };
    expect(models.data.map((m) => [m.id, m.parent])).toEqual([
      ['servebench/sim-llama-8b', null],
      ['a', 'servebench/sim-llama-8b'],
      ['b', 'servebench/sim-llama-8b'],
    ]);
    const ok = await postJson(`${sim.url}/v1/completions`, { model: 'b', prompt: 'hi', max_tokens: 2 });
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as { model: string }).model).toBe('b');
    const unknown = await postJson(`${sim.url}/v1/completions`, { model: 'c', prompt: 'hi', max_tokens: 2 });
    expect(unknown.status).toBe(404);
  });

  it('vLLM mimic: the reset is done; no endpoint or a 404 is not possible, with the way round', async () => {
    const sim = await startSim({ profile: testProfile({ instant: true }) });
    const reset = (engine: 'vllm' | 'sglang' | 'llamacpp') =>
      resetPrefixCache({
        spec: engineFor(engine).cacheReset,
        engineName: engineFor(engine).description.name,
        baseUrls: [sim.url],
        signal,
      });
    expect(await reset('vllm')).toEqual({ status: 'done' });
    // The vLLM mimic serves no /flush_cache: as an SGLang that lacks it.
    expect(await reset('sglang')).toMatchObject({
      status: 'not-possible',
      detail: expect.stringContaining('--no-cache-reset'),
    });
    expect(await reset('llamacpp')).toMatchObject({
      status: 'not-possible',
      detail: expect.stringContaining('llama.cpp has no endpoint'),
    });
  });

  it('SGLang mimic: /flush_cache flushes when idle', async () => {
    const sim = await startSim({ profile: testProfile({ instant: true }), mimic: 'sglang' });
    const result = await resetPrefixCache({
      spec: engineFor('sglang').cacheReset,
      engineName: 'SGLang',
      baseUrls: [sim.url],
      signal,
    });
    expect(result).toEqual({ status: 'done' });
  });

  it('an answer other than 2xx or 404 is a failed reset quoting the status', async () => {
    const fake = (async () => new Response('busy', { status: 400 })) as typeof fetch;
    const result = await resetPrefixCache({
      spec: engineFor('sglang').cacheReset,
      engineName: 'SGLang',
      baseUrls: ['http://replica:1'],
      signal,
      fetch: fake,
    });
    expect(result).toMatchObject({ status: 'failed', detail: expect.stringContaining('HTTP 400') });
  });
});

describe('per-group breakdown', () => {
  const rec = (id: number, adapter: string, nOut: number, ok = true): RequestRecord =>
    ({
      id,
      round: 0,
      warmup: false,
      ok,
      sendMs: 0,
      firstTokenMs: 10,
      endMs: 100,
      ttftMs: 10,
      e2eMs: 100,
      nOut,
      chunks: [],
      adapter,
    }) as unknown as RequestRecord;

  it("splits the level's requests and its output rate by the key", () => {
    const rounds = [
      {
        round: 0,
        windowMs: 1000,
        outputTokPerSec: 0,
        totalTokPerSec: 0,
        reqPerSec: 0,
        completed: 3,
        failed: 1,
        startMs: 0,
        endMs: 1000,
      },
    ];
    const groups = groupBreakdown(
      [rec(1, 'a', 30), rec(2, 'a', 30), rec(3, 'b', 40), rec(4, 'b', 0, false)],
      rounds,
      (r) => r.adapter,
    );
    expect(groups?.map((g) => [g.key, g.requests, g.failed, g.outputTokPerSec])).toEqual([
      ['a', 2, 0, 60],
      ['b', 2, 1, 40],
    ]);
    expect(groupBreakdown([rec(1, 'a', 1)], rounds, () => undefined)).toBeNull();
  });
});
