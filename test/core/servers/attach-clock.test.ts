import { describe, expect, it } from 'vitest';
import { ServerConfigSchema } from '../../../src/shared/config.js';
import type { RunEvent } from '../../../src/shared/events.js';
import { attachServer } from '../../../src/core/servers/attach-server.js';
import { ServerStartError } from '../../../src/core/servers/server-errors.js';
import { fakeClock, settle } from './fake-clock.js';

/** A fetch that answers from a table of paths, or refuses connections like a closed port. */
function fakeFetch(answers: Record<string, number> | 'refuse'): typeof fetch {
  return (async (input: string | URL | Request) => {
    if (answers === 'refuse') throw new TypeError('fetch failed', { cause: { code: 'ECONNREFUSED' } });
    const path = new URL(String(input)).pathname;
    return new Response('{}', { status: answers[path] ?? 404 });
  }) as typeof fetch;
}

function attach(fetchFn: typeof fetch, clock: ReturnType<typeof fakeClock>, events: RunEvent[]) {
  const config = ServerConfigSchema.parse({
    engine: 'attach',
    url: 'http://127.0.0.1:1234/v1',
    startTimeoutMs: 60_000,
  });
  let outcome: unknown;
  const done = attachServer(config, { runDir: '/nonexistent' }, (e) => events.push(e), {
    fetch: fetchFn,
    pollMs: 1_000,
    connectTimeoutMs: 5_000,
    clock,
  }).then(
    (server) => (outcome = server),
    (error: unknown) => (outcome = error),
  );
  return { done, outcome: () => outcome };
}

describe('attach on an injected clock', () => {
  it('waits out a loading server (503) until the start time-out, not a poll longer', async () => {
    const clock = fakeClock();
    const events: RunEvent[] = [];
    const run = attach(fakeFetch({ '/health': 503 }), clock, events);
    await clock.advance(59_000);
    expect(run.outcome()).toBeUndefined();
    await clock.advance(1_000);
    await run.done;
    expect(run.outcome()).toBeInstanceOf(ServerStartError);
    expect((run.outcome() as ServerStartError).failure).toMatchObject({
      kind: 'timeout',
      message: 'http://127.0.0.1:1234 was not ready within 60 s (/health answered 503)',
    });
    const states = events.flatMap((e) => (e.type === 'server-state' ? [e.state] : []));
    expect(states[0]).toBe('checking');
    expect(states.at(-1)).toBe('failed');
    expect(new Set(states.slice(1, -1))).toEqual(new Set(['loading']));
  });

  it('calls a closed port unreachable after the connect grace', async () => {
    const clock = fakeClock();
    const run = attach(fakeFetch('refuse'), clock, []);
    await clock.advance(4_000);
    expect(run.outcome()).toBeUndefined();
    await clock.advance(1_000);
    await run.done;
    expect((run.outcome() as ServerStartError).failure.kind).toBe('unreachable');
    expect((run.outcome() as ServerStartError).message).toContain('ECONNREFUSED');
  });

  it('is ready at once when /health answers 200, and names the listed model', async () => {
    const clock = fakeClock();
    const fetchFn = (async (input: string | URL | Request) => {
      const path = new URL(String(input)).pathname;
      if (path === '/v1/models') return new Response(JSON.stringify({ data: [{ id: 'm1' }] }), { status: 200 });
      return new Response('{}', { status: path === '/health' ? 200 : 404 });
    }) as typeof fetch;
    const run = attach(fetchFn, clock, []);
    await settle();
    await run.done;
    expect(run.outcome()).toMatchObject({ info: { engine: 'attach', model: 'm1', baseUrl: 'http://127.0.0.1:1234' } });
    expect(clock.pending()).toBe(0);
  });
});
