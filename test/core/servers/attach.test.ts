import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { ServerConfigSchema } from '../../../src/shared/config.js';
import { createServerManager, normalizeBaseUrl } from '../../../src/core/servers/manager.js';
import { pickFreePort } from '../../../src/core/servers/ports.js';
import { ServerStartError } from '../../../src/core/servers/server-errors.js';
import { loadProfile, startSimServer } from '../../../src/core/sim/index.js';
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

  it.each(['vllm', 'openai'] as const)(
    'marks a run attached to servebench sim (mimicking %s) as simulated',
    async (mimic) => {
      const sim = await startSimServer({ port: 0, mimic, profile: loadProfile('instant'), log: () => undefined });
      try {
        const { runDir } = await makeRun();
        const server = await manager.start(ServerConfigSchema.parse({ engine: 'attach', url: sim.url }), { runDir });
        expect(server.info.simulated).toBe(true);
      } finally {
        await sim.close();
      }
    },
  );

  it('marks it simulated behind a proxy that forwards only /health and /v1 (its own /metrics says nothing)', async () => {
    const sim = await startSimServer({ port: 0, profile: loadProfile('instant'), log: () => undefined });
    try {
      const url = await serve((req, res) => {
        if (req.url !== '/health' && !req.url?.startsWith('/v1/')) return json(res, 404, { detail: 'Not Found' });
        void fetch(`${sim.url}${req.url}`).then(async (up) => {
          const headers: Record<string, string> = { 'content-type': up.headers.get('content-type') ?? 'text/plain' };
          const mark = up.headers.get('x-servebench-simulator');
          if (mark) headers['x-servebench-simulator'] = mark;
          res.writeHead(up.status, headers).end(await up.text());
        });
      });
      const { runDir } = await makeRun();
      const server = await manager.start(ServerConfigSchema.parse({ engine: 'attach', url }), { runDir });
      expect(server.info.simulated).toBe(true);
    } finally {
      await sim.close();
    }
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

  it('fails at once when /health and /v1/models both answer 404 (another web server)', async () => {
    const seen: string[] = [];
    const url = await serve((req, res) => {
      seen.push(req.url ?? '');
      res.writeHead(404).end('<html>Not Found</html>');
    });
    const { runDir } = await makeRun();
    // Neither the connect grace nor the start time-out can be what ends it.
    const patient = createServerManager({ pollMs: 20, attachConnectTimeoutMs: 600_000 });
    const log = eventLog();
    const error = await patient
      .start(ServerConfigSchema.parse({ engine: 'attach', url: `${url}/v1`, startTimeoutMs: 3_600_000 }), {
        runDir,
        onEvent: log.onEvent,
      })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(ServerStartError);
    const failure = (error as ServerStartError).failure;
    expect(failure.kind).toBe('not-openai');
    expect(`${failure.message}: ${failure.fix}`).toBe(
      `nothing OpenAI-compatible at ${url} (/health and /v1/models answer 404): check --url (host, port, and no /v1 suffix)`,
    );
    expect((error as Error).message.split('\n')).toHaveLength(1);
    expect(seen).toEqual(['/health', '/v1/models']); // one look, no polling
    expect(log.events.at(-1)).toMatchObject({ type: 'server-state', state: 'failed' });
  });

  it('gives up on other non-OpenAI answers after the connect grace, not the start time-out', async () => {
    const url = await serve((req, res) => {
      if (req.url === '/v1/models') return void res.writeHead(405).end();
      res.writeHead(404).end();
    });
    const { runDir } = await makeRun();
    const error = await manager
      .start(ServerConfigSchema.parse({ engine: 'attach', url, startTimeoutMs: 3_600_000 }), { runDir })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect((error as ServerStartError).failure).toMatchObject({
      kind: 'not-openai',
      message: `nothing OpenAI-compatible at ${url} (/health answers 404, /v1/models 405)`,
      fix: 'check --url (host, port, and no /v1 suffix)',
    });
  });

  it('keeps waiting while /v1/models answers 5xx (still loading), past the connect grace', async () => {
    let modelCalls = 0;
    const url = await serve((req, res) => {
      if (req.url === '/v1/models') {
        if (++modelCalls < 4) return void res.writeHead(503).end();
        return json(res, 200, { data: [{ id: 'late' }] });
      }
      res.writeHead(404).end();
    });
    const { runDir } = await makeRun();
    const noGrace = createServerManager({ pollMs: 10, attachConnectTimeoutMs: 0 });
    const server = await noGrace.start(ServerConfigSchema.parse({ engine: 'attach', url }), { runDir });
    expect(modelCalls).toBe(5); // 3 x 503 while polling, the 200 that ended it, the model discovery
    expect(server.info.model).toBe('late');
  });

  it('asks for the API key at once when /health is open but /v1 is not (vLLM --api-key)', async () => {
    const seen: string[] = [];
    const url = await serve((req, res) => {
      seen.push(req.url ?? '');
      if (req.url === '/health') return void res.writeHead(200).end();
      if (req.headers.authorization !== 'Bearer k-9') return json(res, 401, { error: 'Unauthorized' });
      if (req.url === '/v1/models') return json(res, 200, { data: [{ id: 'm' }] });
      res.writeHead(404).end();
    });
    const { runDir } = await makeRun();
    const config = ServerConfigSchema.parse({ engine: 'attach', url, model: 'm' });
    const error = await manager.start(config, { runDir }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((error as ServerStartError).failure).toMatchObject({
      kind: 'unreachable',
      message: `${url} refuses requests without a valid API key (HTTP 401)`,
      fix: 'pass the server API key (--api-key)',
    });
    expect(seen).toEqual(['/health', '/v1/models']);
    const server = await manager.start(config, { runDir, apiKey: 'k-9' });
    expect(server.info.model).toBe('m');
  });

  it('asks for the API key at once on 403 from /v1/models, whatever /health says', async () => {
    const seen: string[] = [];
    const url = await serve((req, res) => {
      seen.push(req.url ?? '');
      res.writeHead(req.url === '/v1/models' ? 403 : 401).end();
    });
    const { runDir } = await makeRun();
    const patient = createServerManager({ pollMs: 20, attachConnectTimeoutMs: 600_000 });
    await expect(patient.start(ServerConfigSchema.parse({ engine: 'attach', url }), { runDir })).rejects.toThrow(
      /\(HTTP 403\); fix: pass the server API key \(--api-key\)$/,
    );
    expect(seen).toEqual(['/health', '/v1/models']);
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
