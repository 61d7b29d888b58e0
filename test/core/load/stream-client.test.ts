import { afterEach, describe, expect, it } from 'vitest';
import { createMonoClock } from '../../../src/core/clock.js';
import { createStreamClient } from '../../../src/core/load/stream-client.js';
import type { RequestSpec } from '../../../src/core/load/stream-client.js';
import { FULL_COMPAT, buildRequestBody } from '../../../src/core/load/request-body.js';
import { startFakeOpenAi } from '../../fakes/fake-openai-server.js';
import type { FakeOpenAiOptions, FakeOpenAiServer } from '../../fakes/fake-openai-server.js';

let server: FakeOpenAiServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

function spec(api: 'chat' | 'completions', outputLen: number, id = 1): RequestSpec {
  return {
    id,
    path: api === 'chat' ? '/v1/chat/completions' : '/v1/completions',
    body: buildRequestBody({
      api,
      model: 'fake-model',
      prompt: 'one two three',
      outputLen,
      ignoreEos: true,
      temperature: 0,
      stream: true,
      compat: FULL_COMPAT,
    }),
    timeoutMs: 10_000,
    requestTag: `t-${id}`,
  };
}

async function sendOnce(options: FakeOpenAiOptions, api: 'chat' | 'completions' = 'chat', outputLen = 8) {
  server = await startFakeOpenAi(options);
  const client = createStreamClient({ baseUrl: server.url, clock: createMonoClock() });
  try {
    return await client.send(spec(api, outputLen));
  } finally {
    await client.close();
  }
}

describe('streaming client against servers that differ', () => {
  it('reads continuous usage from a vLLM-like server', async () => {
    const o = await sendOnce({ usage: 'continuous' });
    expect(o.httpStatus).toBe(200);
    expect(o.result.error).toBeNull();
    expect(o.result.completionTokens).toBe(8);
    expect(o.result.promptTokens).toBe(10);
    expect(o.result.chunkTokensFromServer).toBe(true);
    expect(o.result.chunks).toHaveLength(8);
    expect(o.result.firstTokenMs).toBeGreaterThanOrEqual(o.sendMs);
    expect(o.endMs).toBeGreaterThanOrEqual(o.result.firstTokenMs as number);
  });

  it('sends the fixed-length fields and asks for usage in the stream', async () => {
    await sendOnce({});
    const body = server!.requests[0] as Record<string, unknown>;
    expect(body.max_tokens).toBe(8);
    expect(body.min_tokens).toBe(8);
    expect(body.ignore_eos).toBe(true);
    expect(body.stream).toBe(true);
    expect(body.stream_options).toEqual({ include_usage: true, continuous_usage_stats: true });
  });

  it('estimates tokens by chunks when the server reports no usage', async () => {
    const o = await sendOnce({ usage: 'none', keepAlive: true }, 'completions', 5);
    expect(o.result.completionTokens).toBeNull();
    expect(o.result.clientChunkCount).toBe(5);
    expect(o.result.error).toBeNull();
  });

  it('counts whole blocks of a diffusion-like stream from continuous usage', async () => {
    const o = await sendOnce({ usage: 'continuous', tokensPerChunk: 4 }, 'chat', 12);
    expect(o.result.chunks.map((c) => c[1])).toEqual([4, 4, 4]);
  });

  it('reports an HTTP error with its status and message', async () => {
    const o = await sendOnce({ status: 503 });
    expect(o.httpStatus).toBe(503);
    expect(o.result.errorKind).toBe('http-503');
    expect(o.result.error).toContain('injected failure');
  });

  it('reports an error event inside the stream', async () => {
    const o = await sendOnce({ errorAfterChunks: 2 });
    expect(o.result.errorKind).toBe('midstream-error');
    expect(o.result.clientChunkCount).toBe(2);
  });

  it('survives a server that closes the connection after every stream', async () => {
    server = await startFakeOpenAi({ closeAfter: true });
    const client = createStreamClient({ baseUrl: server.url, clock: createMonoClock() });
    const outcomes = await Promise.all([1, 2, 3, 4].map((id) => client.send(spec('chat', 3, id))));
    const more = await client.send(spec('chat', 3, 5));
    await client.close();
    expect([...outcomes, more].every((o) => o.result.error === null && o.result.completionTokens === 3)).toBe(true);
  });

  it('says connection refused for a dead port, within the request', async () => {
    const client = createStreamClient({ baseUrl: 'http://127.0.0.1:9', clock: createMonoClock() });
    const o = await client.send(spec('chat', 3));
    await client.close();
    expect(o.result.errorKind).toBe('connection-refused');
  });

  it('reads its send time as send() hands the request over, not on a later turn behind queued work', async () => {
    server = await startFakeOpenAi({});
    // A hand-moved clock: only the order of events decides what it reads.
    let now = 0;
    const client = createStreamClient({ baseUrl: server.url, clock: { originMonoNs: 0n, nowMs: () => now } });
    // Work queued before the send (the last response's parsing) must not delay it: a lane refills at the wire end.
    setImmediate(() => (now = 5));
    const o = await client.send(spec('chat', 3));
    await client.close();
    expect(o.sendMs).toBe(0);
    expect(o.result.error).toBeNull();
    expect(o.result.completionTokens).toBe(3);
  });

  it('tells the caller the response ended on the wire before its reads are parsed', async () => {
    server = await startFakeOpenAi({});
    const client = createStreamClient({ baseUrl: server.url, clock: createMonoClock() });
    const order: string[] = [];
    const o = await client
      .send(spec('chat', 3), undefined, () => order.push('ended'))
      .then((outcome) => {
        order.push('outcome');
        return outcome;
      });
    await client.close();
    expect(order).toEqual(['ended', 'outcome']);
    expect(o.result.completionTokens).toBe(3);
  });

  it('never writes a request aborted before its turn to send came', async () => {
    server = await startFakeOpenAi({});
    const client = createStreamClient({ baseUrl: server.url, clock: createMonoClock() });
    const controller = new AbortController();
    const sent = client.send(spec('chat', 3), controller.signal);
    controller.abort();
    const o = await sent;
    await client.close();
    expect(o.result.errorKind).toBe('cancelled');
    expect(o.httpStatus).toBeNull();
    expect(server.requests).toHaveLength(0);
  });

  it('ends an in-flight request at once when aborted', async () => {
    const { createServer } = await import('node:http');
    const controller = new AbortController();
    // The server never finishes the stream; the abort comes once the first chunk is on the wire.
    const hang = createServer((_req, res) => {
      res.setHeader('content-type', 'text/event-stream');
      res.write('data: {"choices":[{"delta":{"content":"a"}}]}\n\n', () => controller.abort());
    });
    await new Promise<void>((r) => hang.listen(0, '127.0.0.1', r));
    const port = (hang.address() as { port: number }).port;
    const client = createStreamClient({ baseUrl: `http://127.0.0.1:${port}`, clock: createMonoClock() });
    const o = await client.send(spec('chat', 3), controller.signal);
    expect(o.result.errorKind).toBe('cancelled');
    await client.close().catch(() => undefined);
    hang.closeAllConnections();
    hang.close();
  });

  it('ends a request the server never answers as a first-byte time-out that names the limit and its flag', async () => {
    const { createServer } = await import('node:http');
    // The server reads the request and never answers: only the client's timer can end it, on any machine.
    const silent = createServer(() => undefined);
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const port = (silent.address() as { port: number }).port;
    const client = createStreamClient({ baseUrl: `http://127.0.0.1:${port}`, clock: createMonoClock() });
    const o = await client.send({ ...spec('chat', 3), timeoutMs: 50 });
    expect(o.result.errorKind).toBe('first-byte-timeout');
    expect(o.result.error).toMatch(/^no response byte within .* \(first-byte limit, set by --timeout\)/);
    expect(o.httpStatus).toBeNull();
    expect(o.endMs).toBeGreaterThanOrEqual(o.sendMs);
    await client.close().catch(() => undefined);
    silent.closeAllConnections();
    silent.close();
  });
});
