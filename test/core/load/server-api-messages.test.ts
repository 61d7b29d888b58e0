import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { FULL_COMPAT } from '../../../src/core/load/request-body.js';
import { ServerApi } from '../../../src/core/load/server-api.js';
import { countChatTokens, DEFAULT_SIM_MODEL } from '../../../src/core/sim/index.js';
import { startLlamaCppLike } from '../../fakes/llamacpp-like-server.js';
import { startFakeOpenAi } from '../../fakes/fake-openai-server.js';
import { closeAll, startSim, testProfile } from '../sim/helpers.js';

const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  await closeAll();
  await Promise.all(cleanups.map((c) => c()));
});

const history = [
  { role: 'user' as const, content: 'a b c' },
  { role: 'assistant' as const, content: 'd e' },
  { role: 'user' as const, content: 'f' },
];

describe('ServerApi history counter (multi-turn)', () => {
  it('counts a whole chat history through a vLLM-style /tokenize, as the server will', async () => {
    const sim = await startSim({ profile: testProfile() });
    const api = new ServerApi({ baseUrl: sim.url });
    const chat = await api.tokenCounter('chat', DEFAULT_SIM_MODEL, FULL_COMPAT);
    expect(await chat.countMessages!(history)).toBe(countChatTokens(history));
    expect((await api.tokenCounter('completions', DEFAULT_SIM_MODEL, FULL_COMPAT)).countMessages).toBeUndefined();
  });

  it('counts it through llama.cpp /apply-template then /tokenize', async () => {
    const server = await startLlamaCppLike({});
    cleanups.push(() => server.close());
    const chat = await new ServerApi({ baseUrl: server.url }).tokenCounter('chat', 'm.gguf', FULL_COMPAT);
    // BOS, then each message's 3 template words around its words: 1 + (3 + 3) + (3 + 2) + (3 + 1).
    expect(await chat.countMessages!(history)).toBe(16);
  });

  it('offers none where the server cannot tokenize (counting by usage would fill the prefix cache)', async () => {
    const fake = await startFakeOpenAi({});
    cleanups.push(() => fake.close());
    const chat = await new ServerApi({ baseUrl: fake.url }).tokenCounter('chat', 'fake-model', FULL_COMPAT);
    expect(chat.viaTokenize).toBe(false);
    expect(chat.countMessages).toBeUndefined();
  });

  it('gives up a hung history count when its signal fires, long before --timeout', async () => {
    let calls = 0;
    // Answers the calibration probe, then hangs every later /tokenize (a server stuck mid-run).
    const hung = createServer((req, res) => {
      req.resume();
      if (++calls === 1) res.end(JSON.stringify({ count: 5 }));
    });
    await new Promise<void>((resolve) => hung.listen(0, '127.0.0.1', resolve));
    cleanups.push(async () => {
      hung.closeAllConnections();
      await new Promise((resolve) => hung.close(resolve));
    });
    const url = `http://127.0.0.1:${(hung.address() as AddressInfo).port}`;
    const api = new ServerApi({ baseUrl: url, timeoutMs: 3_600_000 });
    const chat = await api.tokenCounter('chat', 'm', FULL_COMPAT);
    const abort = new AbortController();
    const count = chat.countMessages!(history, abort.signal);
    // Aborts once the hung request has reached the server.
    while (calls < 2) await new Promise((resolve) => setImmediate(resolve));
    abort.abort();
    await expect(count).rejects.toThrow(/cancelled/);
  });
});
