import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCliAsync } from '../fakes/run-cli.js';

const KEY = 'plainKeyValue-7391';

/** A server that lists a model and refuses every completion, echoing the API key it was sent (some gateways do). */
async function startEchoingServer(): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    if (req.method === 'GET' && req.url?.startsWith('/v1/models')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ object: 'list', data: [{ id: 'echo-model', object: 'model' }] }));
      return;
    }
    const auth = String(req.headers.authorization ?? '');
    req.resume();
    req.on('end', () => {
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: `Incorrect API key provided: ${auth.replace(/^Bearer /, '')}` } }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, server };
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

describe('a server that echoes the API key in its errors', () => {
  it('the key reaches neither the terminal nor the run folder: its value is blanked where the server quoted it', async () => {
    const { url, server } = await startEchoingServer();
    cleanups.push(() => new Promise((r) => server.close(() => r())));
    const out = await mkdtemp(join(tmpdir(), 'sb-echo-'));
    cleanups.push(() => rm(out, { recursive: true, force: true }));
    const res = await runCliAsync([
      'run',
      '--url',
      url,
      '--api-key',
      KEY,
      '--concurrency',
      '1',
      '--input-len',
      '16',
      '--output-len',
      '4',
      '--out',
      out,
    ]);
    expect(res.status).toBe(2);
    expect(res.stdout + res.stderr).toContain('Incorrect API key provided: ***');
    expect(res.stdout + res.stderr).not.toContain(KEY);
    for (const name of await readdir(out)) {
      for (const file of await readdir(join(out, name))) {
        expect(await readFile(join(out, name, file), 'utf8'), file).not.toContain(KEY);
      }
    }
  }, 120_000);
});
