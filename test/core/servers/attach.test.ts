import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { ServerConfigSchema } from '../../../src/shared/config.js';
import { createServerManager, normalizeBaseUrl } from '../../../src/core/servers/manager.js';
import { pickFreePort } from '../../../src/core/servers/ports.js';
import { ServerStartError } from '../../../src/core/servers/server-errors.js';
import { eventLog, makeRun } from './helpers.js';

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});

async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  const server = createServer(handler);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

const json = (res: ServerResponse, status: number, body: unknown): void => {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
};

const manager = createServerManager({ pollMs: 20, attachConnectTimeoutMs: 300 });

describe('attach', () => {
  it('waits for /health, discovers the model and the engine version', async () => {
    let healthCalls = 0;
    const url = await serve((req, res) => {
      if (req.url === '/health') return void res.writeHead(++healthCalls < 3 ? 503 : 200).end();
      if (req.url === '/v1/models') return json(res, 200, { data: [{ id: 'Qwen/Qwen2.5-7B-Instruct' }] });
      if (req.url === '/version') return json(res, 200, { version: '0.10.1' });
      if (req.url === '/metrics') return void res.writeHead(200).end('vllm:num_requests_running 0\n');
      res.writeHead(404).end();
    });
    const { runDir } = await makeRun();
    const log = eventLog();
    const server = await manager.start(ServerConfigSchema.parse({ engine: 'attach', url: `${url}/v1/` }), {
      runDir,
      onEvent: log.onEvent,
    });
    expect(healthCalls).toBe(3);
    expect(server.info).toEqual({
      engine: 'attach',
      baseUrl: url,
      model: 'Qwen/Qwen2.5-7B-Instruct',
      engineVersion: '0.10.1',
      simulated: false,
      metricsUrl: `${url}/metrics`,
    });
    expect(log.events.at(-1)).toMatchObject({ type: 'server-state', state: 'ready' });
    await server.stop();
    expect(server.logTail()).toEqual([]);
  });

  it('accepts a server without /health when /v1/models answers (Ollama, llama.cpp)', async () => {
    const url = await serve((req, res) => {
      if (req.url === '/v1/models') return json(res, 200, { object: 'list', data: [{ id: 'llama3.1:8b' }] });
      res.writeHead(404).end();
    });
    const { runDir } = await makeRun();
    const server = await manager.start(ServerConfigSchema.parse({ engine: 'attach', url }), { runDir });
    expect(server.info.model).toBe('llama3.1:8b');
    expect(server.info.engineVersion).toBeUndefined();
    expect(server.info.metricsUrl).toBeUndefined();
  });

  it('keeps a given model name and warns when the server does not list it', async () => {
    const url = await serve((req, res) => {
      if (req.url === '/health') return void res.writeHead(200).end();
      if (req.url === '/v1/models') return json(res, 200, { data: [{ id: 'a' }] });
      res.writeHead(404).end();
    });
    const { runDir } = await makeRun();
    const log = eventLog();
    const server = await manager.start(ServerConfigSchema.parse({ engine: 'attach', url, model: 'b' }), {
      runDir,
      onEvent: log.onEvent,
    });
    expect(server.info.model).toBe('b');
    expect(log.events).toContainEqual(expect.objectContaining({ type: 'message', severity: 'warn' }));
  });

  it('fails fast and clearly when nothing listens at the URL', async () => {
    const port = await pickFreePort('127.0.0.1');
    const { runDir } = await makeRun();
    const error = await manager
      .start(ServerConfigSchema.parse({ engine: 'attach', url: `http://127.0.0.1:${port}` }), { runDir })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(ServerStartError);
    const failure = (error as ServerStartError).failure;
    expect(failure.kind).toBe('unreachable');
    expect(failure.fix).toBe('is the server running? check --url (scheme, host and port)');
    expect((error as Error).message).toMatch(new RegExp(`nothing answers at http://127.0.0.1:${port}`));
  });

  it('asks for the API key when the server refuses without one, and sends it when given', async () => {
    const url = await serve((req, res) => {
      if (req.url === '/health') return void res.writeHead(404).end();
      if (req.headers.authorization !== 'Bearer k-123') return json(res, 401, { error: 'unauthorized' });
      if (req.url === '/v1/models') return json(res, 200, { data: [{ id: 'm' }] });
      res.writeHead(404).end();
    });
    const { runDir } = await makeRun();
    const config = ServerConfigSchema.parse({ engine: 'attach', url });
    await expect(manager.start(config, { runDir })).rejects.toThrow(/API key.*--api-key/);
    const server = await manager.start(config, { runDir, apiKey: 'k-123' });
    expect(server.info.model).toBe('m');
  });

  it('can be cancelled while the server is still loading', async () => {
    const url = await serve((_req, res) => void res.writeHead(503).end());
    const { runDir } = await makeRun();
    const controller = new AbortController();
    const log = eventLog();
    void log.waitFor((e) => e.type === 'server-state' && e.state === 'loading').then(() => controller.abort());
    const error = await manager
      .start(ServerConfigSchema.parse({ engine: 'attach', url }), {
        runDir,
        signal: controller.signal,
        onEvent: log.onEvent,
      })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect((error as Error).name).toBe('AbortError');
  });

  it('needs a URL', async () => {
    const { runDir } = await makeRun();
    await expect(manager.start(ServerConfigSchema.parse({ engine: 'attach' }), { runDir })).rejects.toThrow(/--url/);
  });

  it('normalises base URLs', () => {
    expect(normalizeBaseUrl('http://h:1/v1/')).toBe('http://h:1');
    expect(normalizeBaseUrl('http://h:1/')).toBe('http://h:1');
    expect(normalizeBaseUrl('http://h:1/api/v1')).toBe('http://h:1/api');
  });
});
