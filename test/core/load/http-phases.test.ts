import { afterEach, describe, expect, it } from 'vitest';
import { createStreamClient } from '../../../src/core/load/stream-client.js';
import { FULL_COMPAT, buildRequestBody } from '../../../src/core/load/request-body.js';
import { requestHttpTimes } from '../../../src/shared/request-record.js';
import type { RequestRecord } from '../../../src/shared/request-record.js';
import { startFakeOpenAi } from '../../fakes/fake-openai-server.js';
import type { FakeOpenAiServer } from '../../fakes/fake-openai-server.js';

let server: FakeOpenAiServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

// Every reading is one ms after the last: the phases' order shows in their stamps, with no real timing.
function steppingClock() {
  let now = 0;
  return { originMonoNs: 0n, nowMs: () => ++now };
}

function spec(id: number) {
  const body = buildRequestBody({
    api: 'chat',
    model: 'fake-model',
    prompt: 'one two three',
    outputLen: 4,
    ignoreEos: true,
    temperature: 0,
    stream: true,
    compat: FULL_COMPAT,
  });
  return { id, path: '/v1/chat/completions', body, timeoutMs: 10_000, requestTag: `phase-${id}` };
}

describe('HTTP phases of a request', () => {
  it('stamps connect, headers sent, response headers, first byte and first token in order; a reused socket has no connect', async () => {
    server = await startFakeOpenAi({ usage: 'continuous' });
    const client = createStreamClient({ baseUrl: server.url, clock: steppingClock(), connections: 1 });
    try {
      const first = await client.send(spec(1));
      const second = await client.send(spec(2));
      const h = first.http!;
      expect(h.connectStartMs).toBeGreaterThan(first.sendMs);
      expect(h.connectEndMs).toBeGreaterThan(h.connectStartMs!);
      expect(h.requestSentMs).toBeGreaterThan(h.connectEndMs!);
      expect(h.headersMs).toBeGreaterThan(h.requestSentMs!);
      expect(h.firstByteMs).toBeGreaterThan(h.headersMs!);
      expect(first.result.firstTokenMs).toBeGreaterThanOrEqual(h.firstByteMs!);
      const h2 = second.http!;
      expect(h2.connectStartMs).toBeUndefined();
      expect(h2.requestSentMs).toBeGreaterThan(second.sendMs);
      expect(h2.firstByteMs).toBeGreaterThan(h2.headersMs!);
    } finally {
      await client.close();
    }
  });

  it('derives phase durations from a record, and none from a record written before phases were kept', () => {
    const base = { sendMs: 100, firstTokenMs: 180, endMs: 300 } as RequestRecord;
    const times = requestHttpTimes({
      ...base,
      http: { connectStartMs: 101, connectEndMs: 104, requestSentMs: 105, headersMs: 150, firstByteMs: 160 },
    });
    expect(times).toEqual({ connectMs: 3, reusedConnection: false, toHeadersMs: 50, ttfbMs: 60, ttftMs: 80 });
    expect(requestHttpTimes(base)).toBeNull();
    expect(
      requestHttpTimes({ ...base, http: { requestSentMs: 101, headersMs: null, firstByteMs: null } })?.reusedConnection,
    ).toBe(true);
  });
});
