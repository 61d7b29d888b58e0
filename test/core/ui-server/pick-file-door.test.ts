import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { createServebenchService } from '../../../src/core/api.js';
import { defaultBenchmarkDeps } from '../../../src/core/default-deps.js';
import { startUiServer } from '../../../src/core/ui-server/index.js';
import type { UiServer } from '../../../src/core/ui-server/index.js';
import { PICK_FILE_UNAVAILABLE } from '../../../src/shared/contract.js';

// `servebench ui` serves a browser: pickFile has no dialog there, and answers so in one line, behind the same door.
let dir: string;
let server: UiServer;
const sockets: WebSocket[] = [];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sb-pick-'));
  await writeFile(join(dir, 'index.html'), '<!doctype html><title>servebench</title>');
  const service = createServebenchService({ outDir: join(dir, 'runs'), deps: defaultBenchmarkDeps() });
  server = await startUiServer({ service, port: 0, staticDir: dir });
});
afterEach(async () => {
  for (const ws of sockets.splice(0)) ws.terminate();
  await server.close();
  await rm(dir, { recursive: true, force: true });
});

/** Sends one call on a fresh connection (with `token`) and answers the reply, or the refused upgrade's status. */
async function call(args: unknown, token = server.token): Promise<Record<string, unknown> | { status: number }> {
  const ws = new WebSocket(`ws://127.0.0.1:${server.port}/rpc?token=${token}`);
  sockets.push(ws);
  return new Promise((resolve, reject) => {
    ws.on('unexpected-response', (_req, res) => resolve({ status: res.statusCode ?? 0 }));
    ws.on('error', reject);
    ws.on('open', () => ws.send(JSON.stringify({ id: 1, method: 'pickFile', args })));
    ws.on('message', (data) => {
      const m = JSON.parse(String(data)) as Record<string, unknown>;
      if (m.id === 1) resolve(m);
    });
  });
}

describe('pickFile through servebench ui (browser mode)', () => {
  it('answers "not available" in one line that says to type the path', async () => {
    expect(await call([{ purpose: 'prompts' }])).toEqual({ id: 1, error: PICK_FILE_UNAVAILABLE });
    expect(PICK_FILE_UNAVAILABLE).toMatch(/type the file's path/);
  });

  it('checks the arguments first: unknown purposes and extra keys are refused by the contract', async () => {
    for (const args of [[{ purpose: '/etc/passwd' }], [{ purpose: 'trace', path: '/etc' }], [], [null]]) {
      const reply = await call(args);
      expect(reply).toMatchObject({ id: 1, error: expect.any(String) });
      expect((reply as { error: string }).error).not.toBe(PICK_FILE_UNAVAILABLE);
      expect((reply as { error: string }).error).not.toContain('\n');
    }
  });

  it('needs the printed token like every call', async () => {
    expect(await call([{ purpose: 'trace' }], 'wrong')).toEqual({ status: 403 });
  });
});
