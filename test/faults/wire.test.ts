import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runBenchmark } from '../../src/core/benchmark.js';
import { createMonoClock } from '../../src/core/clock.js';
import { isUserError } from '../../src/core/errors.js';
import { FULL_COMPAT, buildRequestBody } from '../../src/core/load/request-body.js';
import { ServerApi } from '../../src/core/load/server-api.js';
import { createStreamClient } from '../../src/core/load/stream-client.js';
import type { RequestOutcome } from '../../src/core/load/stream-client.js';
import { attachServer } from '../../src/core/servers/attach-server.js';
import { ServerStartError } from '../../src/core/servers/server-errors.js';
import type { StartServer } from '../../src/core/servers/types.js';
import { BenchConfigSchema } from '../../src/shared/config.js';
import type { RunEvent } from '../../src/shared/events.js';
import { startReturningServer } from '../fakes/returning-server.js';
import type { ReturningServer } from '../fakes/returning-server.js';
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

describe('an attached server (--url) that dies or restarts', () => {
  /** attach as `servebench run --url` does, with a quick watch; `onProbe` sees every probe's answer. */
  const attachWith =
    (onProbe: (url: string, res: Response | null) => Promise<void> = async () => undefined): StartServer =>
    (config, opts) =>
      attachServer(config, opts, opts.onEvent ?? (() => {}), {
        fetch: (async (input: string | URL | Request, init?: RequestInit) => {
          try {
            const res = await fetch(input, init);
            await onProbe(String(input), res);
            return res;
          } catch (error) {
            await onProbe(String(input), null);
            throw error;
          }
        }) as typeof fetch,
        pollMs: 10,
        connectTimeoutMs: 10_000,
        watchMs: 10,
      });

  async function run(server: ReturningServer, startServer: StartServer, concurrency: number[]) {
    const out = await mkdtemp(join(tmpdir(), 'sb-faults-wire-'));
    cleanups.push(() => rm(out, { recursive: true, force: true }));
    const events: RunEvent[] = [];
    const config = BenchConfigSchema.parse({
      out,
      label: 'wire',
      concurrency,
      inputLen: [24],
      outputLen: [4],
      rounds: 3,
      requestsPerRound: 8,
      warmup: 2,
      server: { engine: 'attach', url: server.url },
    });
    const result = await runBenchmark(config, { startServer, onEvent: (e) => events.push(e) });
    return { ...result, events };
  }

  it("dies mid-level: the level ends cut short by the server (no throughput from the partial round) and the run fails, as a launched engine's death", async () => {
    const server = await startReturningServer();
    cleanups.push(() => server.close());
    // The compatibility probe, warm-up 2, round 0 (8) and 1 of round 1: the 13th request finds the server dying.
    server.dieAtRequest(13);
    const { record, failure } = await run(server, attachWith(), [2]);
    const level = record.levels[0]!;
    expect(level.partial).toBe(true);
    expect(level.cutShort).toMatch(/^the server died: the attached server at .* stopped answering/);
    expect(level.checks.find((c) => c.id === 'cut-short')?.status).toBe('fail');
    expect(level.rounds.filter((r) => !r.partial)).toHaveLength(1);
    expect(level.rounds.filter((r) => r.partial)).toHaveLength(1);
    // The rate is round 0's alone: the partial round's requests did not fill a window.
    expect(level.outputTokPerSec).toBe(level.rounds[0]!.outputTokPerSec);
    expect(record.status).toBe('failed');
    expect(failure).toMatch(/^server died during the run: the attached server at .* stopped answering/);
    // No request was sent after the death was known: the level did not run on to its third round.
    expect(server.completions()).toBeLessThan(2 + 3 * 8);
  });

  it('dies between levels and comes back: noticed before the next level and said; the run goes on', async () => {
    const server = await startReturningServer();
    cleanups.push(() => server.close());
    // The compatibility probe, then level 1's warm-up 2 and 3 rounds of 8: down once all 27 answers are sent.
    server.dieAfterResponses(27);
    let restarted = false;
    const startServer = attachWith(async (_url, res) => {
      // The first probe that finds it gone has seen the outage: the supervisor brings it back.
      if (res === null && !restarted) {
        restarted = true;
        await server.comeBack();
      }
    });
    const { record, events, failure } = await run(server, startServer, [1, 2]);
    expect(failure).toBeUndefined();
    expect(record.status).toBe('completed');
    expect(record.levels).toHaveLength(2);
    expect(record.levels.every((l) => !l.partial)).toBe(true);
    const said = events.flatMap((e) => (e.type === 'message' && e.severity === 'warn' ? [e.text] : []));
    expect(said).toContainEqual(
      expect.stringMatching(/did not answer for about \d+ s between levels and answers again/),
    );
  });

  it('dies between levels and stays down: the run fails before the next level, nothing measured on nothing', async () => {
    const server = await startReturningServer();
    cleanups.push(() => server.close());
    server.dieAfterResponses(27);
    const startServer: StartServer = (config, opts) =>
      attachServer(config, opts, opts.onEvent ?? (() => {}), {
        fetch,
        pollMs: 10,
        connectTimeoutMs: 300,
        watchMs: 10,
      });
    const { record, failure } = await run(server, startServer, [1, 2]);
    expect(record.levels).toHaveLength(1);
    expect(record.status).toBe('failed');
    expect(failure).toMatch(/stopped answering \(ECONNREFUSED between levels, for over 1 s\)/);
  });
});
