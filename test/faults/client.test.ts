import { afterEach, describe, expect, it } from 'vitest';
import { createMonoClock } from '../../src/core/clock.js';
import { isUserError } from '../../src/core/errors.js';
import { readContextLimit } from '../../src/core/load/context-limit.js';
import { createInThreadExecutor } from '../../src/core/load/executor.js';
import type { LevelPlan } from '../../src/core/load/level-plan.js';
import { runLevel } from '../../src/core/load/level-runner.js';
import { buildPrompts } from '../../src/core/load/prompts.js';
import { FULL_COMPAT, buildRequestBody } from '../../src/core/load/request-body.js';
import { ServerApi } from '../../src/core/load/server-api.js';
import { createStreamClient } from '../../src/core/load/stream-client.js';
import type { RequestSpec } from '../../src/core/load/stream-client.js';
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
    rounds: concurrency > 64 ? 1 : 2,
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
      expect(records).toHaveLength(c + (c > 64 ? 1 : 2) * Math.max(8, c));
      expect(records.every((r) => r.nIn === 64 && r.nOut === 24 && r.nOutSource === 'server')).toBe(true);
    }, 240_000);
  }
});

describe('client against a server that closes after streams', () => {
  it('a request written onto a socket the server is closing: retried once on a new socket, then no socket is reused', async () => {
    // The server closes each socket 30 s after its stream: any request written onto it meanwhile dies unanswered.
    const server = await startLlamaCppLike({ slots: 1, closeDelayMs: 30_000 });
    const client = createStreamClient({ baseUrl: server.url, clock: createMonoClock() });
    cleanups.push(() => server.close());
    cleanups.push(() => client.close());
    const outcomes = [];
    // Sequential requests reuse the idle socket at once (unless this machine stalls past the 4 s keep-alive).
    for (let i = 1; i <= 20 && server.lostOnClosingSocket === 0; i++) outcomes.push(await client.send(spec(i)));
    expect(server.lostOnClosingSocket).toBe(1);
    expect(client.freshConnections).toBe(true);
    for (let i = 21; i <= 25; i++) outcomes.push(await client.send(spec(i)));
    expect(server.lostOnClosingSocket).toBe(1);
    expect(outcomes.map((o) => o.result.error)).toEqual(outcomes.map(() => null));
  });

  it('a server that drops every request unanswered: counted as connection-reset after at most one retry', async () => {
    const { server, client } = await hostile('drop-unanswered');
    const first = await client.send(spec(1));
    const second = await client.send(spec(2));
    expect(first.result.errorKind).toBe('connection-reset');
    expect(second.result.errorKind).toBe('connection-reset');
    expect(server.requests()).toBeLessThanOrEqual(3);
  });
});

describe('client against a llama.cpp context limit', () => {
  it('llama.cpp prompt past the context: fails as http-400 quoting the server (request (N tokens) exceeds the available context size)', async () => {
    const server = await startLlamaCppLike({ slots: 1, nCtx: 16 });
    const client = createStreamClient({ baseUrl: server.url, clock: createMonoClock() });
    cleanups.push(() => server.close());
    cleanups.push(() => client.close());
    const long = { ...spec(1), body: spec(1).body.replace('one two three', 'w '.repeat(40).trim()) };
    const o = await client.send(long);
    expect(o.httpStatus).toBe(400);
    expect(o.result.errorKind).toBe('http-400');
    expect(o.result.error).toMatch(
      /request \(\d+ tokens\) exceeds the available context size \(16 tokens\), try increasing it/,
    );
  });

  it('llama.cpp /tokenize and /apply-template: chat prompts counted exactly, as its chat handler will (BOS and template)', async () => {
    const server = await startLlamaCppLike({});
    cleanups.push(() => server.close());
    const api = new ServerApi({ baseUrl: server.url, timeoutMs: 30_000 });
    const chat = await api.tokenCounter('chat', MODEL, FULL_COMPAT);
    const completions = await api.tokenCounter('completions', MODEL, FULL_COMPAT);
    expect(chat.viaTokenize).toBe(true);
    expect(completions.viaTokenize).toBe(true);
    // Template head + tail are 3 words, BOS 1: 5 words of text are 9 tokens in chat, 6 as a completion prompt.
    expect(await chat.counter('a b c d e')).toBe(9);
    expect(await completions.counter('a b c d e')).toBe(6);
    expect(server.started).toBe(0);
    expect(await readContextLimit({ baseUrl: server.url, model: MODEL })).toEqual({
      tokens: 4096,
      source: 'n_ctx per slot in /props',
      engine: 'llamacpp',
      slots: 4,
    });
  });
});

describe('client against hostile servers', () => {
  it('headers then silence: fails as idle-timeout naming the limit, not at the overall time-out', async () => {
    const { client } = await hostile('headers-then-silence');
    const o = await client.send(spec(1, { idleTimeoutMs: 300 }));
    expect(o.httpStatus).toBe(200);
    expect(o.result.errorKind).toBe('idle-timeout');
    expect(o.result.error).toMatch(/silent for 0\.3 s \(idle limit/);
  });

  it('no answer at all: fails as first-byte-timeout naming the limit', async () => {
    const { client } = await hostile('silence');
    const o = await client.send(spec(1, { firstByteTimeoutMs: 300 }));
    expect(o.httpStatus).toBeNull();
    expect(o.result.errorKind).toBe('first-byte-timeout');
    expect(o.result.error).toMatch(/no response byte within 0\.3 s/);
  });

  it('no answer, default limits: the first-byte limit is the whole --timeout and says so', async () => {
    const { client } = await hostile('silence');
    const o = await client.send(spec(1, { timeoutMs: 300 }));
    expect(o.result.errorKind).toBe('first-byte-timeout');
    expect(o.result.error).toContain('--timeout');
  });

  it('a 300 MB line without a newline: fails fast as line-too-long, reads a bounded amount and drops the connection', async () => {
    const { server, client } = await hostile('endless-line');
    const o = await client.send(spec(1));
    expect(o.result.errorKind).toBe('line-too-long');
    expect(o.result.error).toContain('without a newline');
    // The client stopped reading after about 1 MiB: the server could not push much past it before the drop.
    expect(server.bytesSent()).toBeLessThan(64 * 1024 * 1024);
  });

  it('an endless line, cancelled: the abort (Ctrl-C) ends the request at once as cancelled', async () => {
    const { server, client } = await hostile('endless-line', { endlessBytes: 1024 * 1024 * 1024 });
    const controller = new AbortController();
    const pending = client.send(spec(1, { timeoutMs: 600_000 }), controller.signal);
    await server.firstBytes;
    controller.abort({ message: 'cancelled by the user', kind: 'cancelled' });
    const o = await pending;
    // Whichever comes first ends it: the cap on the line or the user; the stream never holds the client.
    expect(['cancelled', 'line-too-long']).toContain(o.result.errorKind);
    expect(server.bytesSent()).toBeLessThan(64 * 1024 * 1024);
  });

  it('text/html 200: fails as not-event-stream naming the content type and the first bytes', async () => {
    const { client } = await hostile('html-200');
    const o = await client.send(spec(1));
    expect(o.httpStatus).toBe(200);
    expect(o.result.errorKind).toBe('not-event-stream');
    expect(o.result.error).toContain('text/html');
    expect(o.result.error).toContain('<!DOCTYPE html>');
  });

  it('a whole JSON chat completion 200: fails as not-event-stream saying it was not streamed', async () => {
    const { client } = await hostile('json-200');
    const o = await client.send(spec(1));
    expect(o.result.errorKind).toBe('not-event-stream');
    expect(o.result.error).toContain('non-streamed chat completion');
    expect(o.result.error).toContain('application/json');
  });

  it('SSE labelled text/plain: still read as a stream (sniffed)', async () => {
    const { client } = await hostile('sse-as-text-plain');
    const o = await client.send(spec(1));
    expect(o.result.error).toBeNull();
    expect(o.result.clientChunkCount).toBe(3);
  });

  it('a reset (RST) mid-stream: counted as a connection-reset failure', async () => {
    const { client } = await hostile('reset-mid-stream');
    const o = await client.send(spec(1));
    expect(o.result.error).not.toBeNull();
    expect(o.result.errorKind).toBe('connection-reset');
  });

  it('a connection closed mid-stream: counted as a connection-reset failure with the tokens so far, never retried', async () => {
    const { server, client } = await hostile('close-mid-stream');
    const o = await client.send(spec(1));
    expect(o.httpStatus).toBe(200);
    expect(o.result.errorKind).toBe('connection-reset');
    expect(o.result.clientChunkCount).toBe(3);
    expect(server.requests()).toBe(1);
    // A break inside one response is that request's failure, not a sign the server closes sockets by habit.
    expect(client.freshConnections).toBe(false);
  });

  it('an endless error body: fails as the HTTP error from its first 64 KiB and drops the connection', async () => {
    const { server, client } = await hostile('endless-error-body', { endlessBytes: 1024 * 1024 * 1024 });
    const o = await client.send(spec(1));
    expect(o.result.errorKind).toBe('http-500');
    expect(o.result.error).toContain('Internal Server Error');
    expect(server.bytesSent()).toBeLessThan(64 * 1024 * 1024);
  });

  it('a 60 KB error message: the record keeps the HTTP status and the first 500 characters', async () => {
    const { client } = await hostile('huge-error-message');
    const o = await client.send(spec(1));
    expect(o.result.errorKind).toBe('http-400');
    expect(o.result.error!.length).toBeLessThanOrEqual(501);
    expect(o.result.error).toMatch(/^HTTP 400: xxxx/);
  });

  it('a hung control call (tokenize, probe): one line naming --timeout, not an internal error', async () => {
    const { server } = await hostile('headers-then-silence');
    const api = new ServerApi({ baseUrl: server.url, timeoutMs: 300 });
    const error = await api.tokenCounter('chat', MODEL, FULL_COMPAT).catch((e: unknown) => e);
    expect(isUserError(error)).toBe(true);
    expect((error as Error).message).toMatch(/no complete answer within 0\.3 s \(--timeout\)/);
  });

  it('a server answering the probe with a web page: one line saying it is not an event stream', async () => {
    const { server } = await hostile('html-200');
    const api = new ServerApi({ baseUrl: server.url, timeoutMs: 30_000 });
    const error = await api.probeCompat('chat', MODEL).catch((e: unknown) => e);
    expect(isUserError(error)).toBe(true);
    expect((error as Error).message).toContain('not an event stream');
  });
});
