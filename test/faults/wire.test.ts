import { afterEach, describe, expect, it } from 'vitest';
import { createMonoClock } from '../../src/core/clock.js';
import { isUserError } from '../../src/core/errors.js';
import { FULL_COMPAT, buildRequestBody } from '../../src/core/load/request-body.js';
import { ServerApi } from '../../src/core/load/server-api.js';
import { createStreamClient } from '../../src/core/load/stream-client.js';
import type { RequestOutcome } from '../../src/core/load/stream-client.js';
import { attachServer } from '../../src/core/servers/attach-server.js';
import { ServerStartError } from '../../src/core/servers/server-errors.js';
import { startWireServer } from '../fakes/wire-server.js';
import type { WireOptions, WireServer } from '../fakes/wire-server.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

const clock = createMonoClock();

async function wire(options: Omit<WireOptions, 'clock'>): Promise<WireServer> {
  const server = await startWireServer({ clock, ...options });
  cleanups.push(() => server.close());
  return server;
}

/** One streamed chat request to `server` through the real stream client. */
async function streamOnce(server: WireServer): Promise<RequestOutcome> {
  const client = createStreamClient({ baseUrl: server.url, clock });
  cleanups.push(() => client.close());
  return client.send({
    id: 1,
    path: '/v1/chat/completions',
    body: buildRequestBody({
      api: 'chat',
      model: 'wire-model',
      prompt: 'hello',
      outputLen: 4,
      ignoreEos: true,
      temperature: 0,
      stream: true,
      compat: FULL_COMPAT,
    }),
    timeoutMs: 30_000,
    requestTag: 'wire-1',
  });
}

/** The request succeeded with every token, each chunk's stamp no earlier than the server wrote it. */
function expectWhole(outcome: RequestOutcome, server: WireServer, tokens: number): void {
  expect(outcome.result.error).toBeNull();
  expect(outcome.result.chunks).toHaveLength(tokens);
  expect(outcome.result.completionTokens).toBe(tokens);
  expect(outcome.result.malformedLines).toBe(0);
  outcome.result.chunks.forEach(([t], i) => expect(t).toBeGreaterThanOrEqual(server.tokenWrites[i]!));
  expect(outcome.result.firstTokenMs).toBe(outcome.result.chunks[0]![0]);
}

describe('SSE framing the standard allows', () => {
  it('a UTF-8 BOM before the first event: stripped; TTFT is the first token read, before the second was sent', async () => {
    const server = await wire({ bom: true, tokens: 3, gapMs: 80 });
    const outcome = await streamOnce(server);
    expectWhole(outcome, server, 3);
    // The first token's stamp is its own read: the second token left the server 80 ms after it.
    expect(outcome.result.firstTokenMs!).toBeLessThan(server.tokenWrites[1]!);
  });

  it('CR-only line ends: every event read, at its own read', async () => {
    const server = await wire({ lineEnd: '\r', tokens: 4, gapMs: 20 });
    expectWhole(await streamOnce(server), server, 4);
  });

  it('CRLF line ends: every event read', async () => {
    const server = await wire({ lineEnd: '\r\n', tokens: 4 });
    expectWhole(await streamOnce(server), server, 4);
  });

  it('events after [DONE]: ignored (no tokens, no usage, no error from them)', async () => {
    const late = JSON.stringify({
      object: 'chat.completion.chunk',
      choices: [{ index: 0, delta: { content: ' stale' } }],
      usage: { prompt_tokens: 7, completion_tokens: 99 },
    });
    const server = await wire({ tokens: 3, afterDone: [late, late, JSON.stringify({ error: { message: 'late' } })] });
    const outcome = await streamOnce(server);
    expectWhole(outcome, server, 3);
    expect(outcome.result.sawDone).toBe(true);
  });
});

describe('compressed responses (a proxy with gzip or brotli on for event streams)', () => {
  for (const encoding of ['gzip', 'deflate', 'deflate-raw', 'br'] as const) {
    it(`Content-Encoding ${encoding === 'deflate-raw' ? 'deflate (raw, as some servers send it)' : encoding}: decoded read by read, stamps are the network reads'`, async () => {
      const server = await wire({ encoding, tokens: 5, gapMs: 30 });
      const outcome = await streamOnce(server);
      expectWhole(outcome, server, 5);
      // Decoded as it arrived, not at the end: the first token was stamped before the last one was sent.
      expect(outcome.result.firstTokenMs!).toBeLessThan(server.tokenWrites[4]!);
    });
  }

  for (const encoding of ['zstd', 'gzip, br'] as const) {
    it(`Content-Encoding "${encoding}": refused in one line naming it and the fix`, async () => {
      const server = await wire({ encoding, tokens: 2 });
      const outcome = await streamOnce(server);
      expect(outcome.result.errorKind).toBe('content-encoding');
      expect(outcome.result.error).toContain(`"${encoding}"`);
      expect(outcome.result.error).toMatch(/turn response compression off/);
    });
  }

  it('a gzip bomb (200 MiB of zeros in 200 KB): dropped as decoded-too-large, never inflated', async () => {
    const server = await wire({ encoding: 'gzip', tokens: 2, bombBytes: 200 << 20 });
    const outcome = await streamOnce(server);
    expect(outcome.result.errorKind).toBe('decoded-too-large');
    expect(outcome.result.error).toMatch(/decompression bomb/);
    // What came before the bomb is kept.
    expect(outcome.result.chunks).toHaveLength(1);
  });

  it('a gzip-compressed /tokenize and model list: decoded by the control calls and the probes', async () => {
    const server = await wire({ encoding: 'gzip' });
    const api = new ServerApi({ baseUrl: server.url, timeoutMs: 30_000 });
    const res = await api.call('POST', '/tokenize', { prompt: 'hello' });
    expect(res.json).toEqual({ count: 7, max_model_len: 4096 });
    const running = await attachServer(
      { engine: 'attach', url: server.url, startTimeoutMs: 30_000 } as never,
      { runDir: '' },
      () => {},
      {
        fetch,
        pollMs: 10,
        connectTimeoutMs: 1_000,
      },
    );
    expect(running.info.model).toBe('wire-model');
  });

  it('a gzip bomb from /tokenize: refused, the decoded size capped as for a plain body', async () => {
    const server = await wire({ encoding: 'gzip', bombBytes: 200 << 20 });
    const api = new ServerApi({ baseUrl: server.url, timeoutMs: 30_000 });
    const error = await api.call('POST', '/tokenize', { prompt: 'hello' }).catch((e: unknown) => e);
    expect(isUserError(error)).toBe(true);
    expect((error as Error).message).toMatch(/decompression bomb|more than 16 MiB/);
  });
});

describe('redirects and headers no client takes (gateways in front of the server)', () => {
  const elsewhere = 'http://127.0.0.1:9/api/v1/chat/completions';

  it('a stream request answered 307: the request fails naming the Location and the --url to use', async () => {
    const server = await wire({ redirect: { status: 307, location: elsewhere } });
    const outcome = await streamOnce(server);
    expect(outcome.httpStatus).toBe(307);
    expect(outcome.result.error).toBe(
      `the server answered 307 to ${elsewhere}: point --url there (--url http://127.0.0.1:9/api)`,
    );
  });

  it('a control call answered 308 with a relative Location: one line with the resolved address', async () => {
    const server = await wire({ redirect: { status: 308, location: '/other/v1/chat/completions' } });
    const api = new ServerApi({ baseUrl: server.url, timeoutMs: 30_000 });
    const error = await api.probeCompat('chat', 'wire-model').catch((e: unknown) => e);
    expect(isUserError(error)).toBe(true);
    expect((error as Error).message).toBe(
      `POST ${server.url}/v1/chat/completions: the server answered 308 to ${server.url}/other/v1/chat/completions: point --url there (--url ${server.url}/other)`,
    );
  });

  it('attach to a server whose /v1/models redirects: refused at once naming the Location, not waited on', async () => {
    const server = await wire({ redirect: { status: 302, location: 'https://login.example/sso' } });
    const error = await attachServer(
      { engine: 'attach', url: server.url, startTimeoutMs: 600_000 } as never,
      { runDir: '' },
      () => {},
      { fetch, pollMs: 10, connectTimeoutMs: 600_000 },
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServerStartError);
    expect((error as ServerStartError).failure.message).toBe(
      `${server.url}/v1/models: the server answered 302 to https://login.example/sso`,
    );
    expect((error as ServerStartError).failure.fix).toBe('point --url there');
  });

  it('200 response headers (20 KB) on a stream: named as too many or too large headers, not a dead server', async () => {
    const server = await wire({ headerBytes: 20_000 });
    const outcome = await streamOnce(server);
    expect(outcome.result.errorKind).toBe('bad-answer');
    expect(outcome.result.error).toMatch(
      /^the server answered with response headers over 16 KiB \(too many or too large\)/,
    );
  });

  it('200 response headers on the control calls and the attach probes: the same line, not "is the server running?"', async () => {
    const server = await wire({ headerBytes: 20_000 });
    const api = new ServerApi({ baseUrl: server.url, timeoutMs: 30_000 });
    const error = await api.call('POST', '/tokenize', {}).catch((e: unknown) => e);
    expect((error as Error).message).toMatch(/: the server answered with response headers over 16 KiB/);
    expect((error as Error).message).not.toMatch(/is the server running/);
    const failed = await attachServer(
      { engine: 'attach', url: server.url, startTimeoutMs: 600_000 } as never,
      { runDir: '' },
      () => {},
      { fetch, pollMs: 10, connectTimeoutMs: 600_000 },
    ).catch((e: unknown) => e);
    expect((failed as ServerStartError).failure.message).toMatch(
      /\/health: the server answered with response headers over 16 KiB/,
    );
  });
});
