import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { startUiServer } from '../../../src/core/ui-server/index.js';
import type { UiServer } from '../../../src/core/ui-server/index.js';
import { resolveStaticPath } from '../../../src/core/ui-server/static-files.js';
import { CONTRACT_METHODS } from '../../../src/shared/contract.js';
import { FakeService } from '../../fakes/fake-service.js';
import { frameMessages } from '../../fakes/ui-frames.js';

let staticDir: string;
let service: FakeService;
let server: UiServer;
const sockets: WebSocket[] = [];

beforeEach(async () => {
  staticDir = await mkdtemp(join(tmpdir(), 'sb-ui-static-'));
  await writeFile(join(staticDir, 'index.html'), '<!doctype html><title>servebench</title>');
  await mkdir(join(staticDir, 'assets'));
  await writeFile(join(staticDir, 'assets', 'app.js'), 'console.log(1)');
  service = new FakeService();
  server = await startUiServer({ service, port: 0, staticDir });
});
afterEach(async () => {
  for (const ws of sockets.splice(0)) ws.terminate();
  await server.close();
  await rm(staticDir, { recursive: true, force: true });
});

function get(
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; type: string; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: server.port, path, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type'] ?? ''), body }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

/** A connected client with its messages in arrival order. */
async function client(
  headers: Record<string, string> = {},
): Promise<{ ws: WebSocket; messages: unknown[]; next: (n?: number) => Promise<unknown[]> }> {
  const ws = new WebSocket(`ws://127.0.0.1:${server.port}/rpc?token=${server.token}`, { headers });
  sockets.push(ws);
  const messages: unknown[] = [];
  const waiters: Array<() => void> = [];
  ws.on('message', (data) => {
    messages.push(...frameMessages(data));
    waiters.splice(0).forEach((w) => w());
  });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  const next = async (n = 1): Promise<unknown[]> => {
    while (messages.length < n) await new Promise<void>((r) => waiters.push(r));
    return messages.splice(0, n);
  };
  return { ws, messages, next };
}

describe('ui server', () => {
  it('listens on 127.0.0.1 only and refuses other addresses', async () => {
    expect(server.host).toBe('127.0.0.1');
    expect(server.url).toBe(`http://127.0.0.1:${server.port}/?token=${server.token}`);
    await expect(startUiServer({ service, port: 0, staticDir, host: '0.0.0.0' })).rejects.toThrow(/loopback only/);
  });

  it('serves the built renderer and nothing outside it', async () => {
    const index = await get('/');
    expect(index.status).toBe(200);
    expect(index.type).toMatch(/text\/html/);
    expect(index.body).toContain('<title>servebench</title>');
    const js = await get('/assets/app.js');
    expect(js.type).toMatch(/javascript/);
    expect((await get('/missing.js')).status).toBe(404);
    expect((await get('/../../etc/passwd')).status).toBe(404);
    expect((await get('/%2e%2e/%2e%2e/etc/passwd')).status).toBe(404);
    expect(resolveStaticPath('/srv/app', '/../../etc/passwd')).toBe('/srv/app/etc/passwd');
    expect(resolveStaticPath('/srv/app', '/a%00b')).toBeNull();
  });

  it('refuses foreign Host headers (DNS rebinding) and foreign origins on the socket', async () => {
    expect((await get('/', { host: 'evil.example:80' })).status).toBe(403);
    await expect(client({ origin: 'http://evil.example' })).rejects.toThrow(/403/);
    const ok = await client({ origin: `http://127.0.0.1:${server.port}` });
    expect(ok.ws.readyState).toBe(WebSocket.OPEN);
  });

  it('answers calls with results, and invalid arguments with a one-line error before the service sees them', async () => {
    const c = await client();
    c.ws.send(JSON.stringify({ id: 1, method: 'listPresets', args: [] }));
    expect(await c.next()).toEqual([{ id: 1, result: [{ name: 'sim-demo', description: 'the simulator' }] }]);

    c.ws.send(JSON.stringify({ id: 2, method: 'startRun', args: [{ concurrency: [0] }] }));
    const [bad] = (await c.next()) as Array<{ id: number; error: string }>;
    expect(bad?.id).toBe(2);
    expect(bad?.error).toMatch(/^concurrency\.0: /);
    expect(service.calls.some((x) => x.method === 'startRun')).toBe(false);

    c.ws.send(JSON.stringify({ id: 3, method: 'getRun', args: [42] }));
    expect(((await c.next()) as Array<{ error: string }>)[0]?.error).toMatch(/expected string/);
    c.ws.send(JSON.stringify({ id: 4, method: 'deleteEverything', args: [] }));
    expect(await c.next()).toEqual([{ id: 4, error: "unknown method 'deleteEverything'" }]);
    c.ws.send('not json');
    expect(await c.next()).toEqual([{ id: null, error: 'bad message: not JSON' }]);
  });

  it('relays getTelemetry with a run id and refuses a missing or empty one before the service sees it', async () => {
    const c = await client();
    c.ws.send(JSON.stringify({ id: 1, method: 'getTelemetry', args: ['run-1'] }));
    expect(await c.next()).toEqual([{ id: 1, result: { gpu: [], engine: [] } }]);
    expect(service.calls.filter((x) => x.method === 'getTelemetry')).toEqual([
      { method: 'getTelemetry', args: ['run-1'] },
    ]);
    for (const [id, args] of [
      [2, []],
      [3, ['']],
      [4, [7]],
      [5, 'run-1'],
    ] as const) {
      c.ws.send(JSON.stringify({ id, method: 'getTelemetry', args }));
      const [reply] = (await c.next()) as Array<{ id: number; error?: string; result?: unknown }>;
      expect(reply?.id).toBe(id);
      expect(reply?.error).toMatch(/./);
      expect(reply?.result).toBeUndefined();
    }
    expect(service.calls.filter((x) => x.method === 'getTelemetry')).toHaveLength(1);
  });

  it('knows every contract method (none is answered as unknown)', async () => {
    const c = await client();
    for (const [i, method] of CONTRACT_METHODS.entries()) {
      c.ws.send(JSON.stringify({ id: i, method, args: 'not a list' }));
      expect(await c.next()).toEqual([{ id: i, error: `arguments of ${method} must be a list` }]);
    }
  });

  it("passes the service's user errors through as they are", async () => {
    const c = await client();
    c.ws.send(JSON.stringify({ id: 7, method: 'getRun', args: ['nope'] }));
    expect(await c.next()).toEqual([{ id: 7, error: 'run nope not found' }]);
  });

  it('relays every service event to every client, and replays the active run to a late one', async () => {
    const a = await client();
    const b = await client();
    a.ws.send(JSON.stringify({ id: 1, method: 'startRun', args: [{ concurrency: [1, 2] }] }));
    const got = await a.next(2);
    expect(got).toContainEqual({
      event: { type: 'run-started', runId: 'r1', dir: '/tmp/r1', simulated: true, totalLevels: 2 },
    });
    expect(got).toContainEqual(expect.objectContaining({ id: 1, result: expect.objectContaining({ runId: 'r1' }) }));
    expect(await b.next()).toEqual([{ event: expect.objectContaining({ type: 'run-started' }) }]);
    service.emit({ type: 'server-state', state: 'ready' });
    expect(await a.next()).toEqual([{ event: { type: 'server-state', state: 'ready' } }]);
    expect(await b.next()).toEqual([{ event: { type: 'server-state', state: 'ready' } }]);

    const late = await client();
    expect(await late.next(2)).toEqual([
      { event: expect.objectContaining({ type: 'run-started' }) },
      { event: { type: 'server-state', state: 'ready' } },
    ]);
  });

  it('closes its clients and stops listening on close', async () => {
    const c = await client();
    const closed = new Promise<void>((r) => c.ws.once('close', () => r()));
    await server.close();
    await closed;
    await expect(get('/')).rejects.toThrow();
    server = await startUiServer({ service, port: 0, staticDir }); // for afterEach
  });
});
