import { createServer } from 'node:net';
import { connect } from 'node:net';
import type { Socket } from 'node:net';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { uiCommand } from '../../src/cli/ui-command.js';
import { createServebenchService } from '../../src/core/api.js';
import { isUserError } from '../../src/core/errors.js';
import { redactLine, isSecretName, redactArgv, redact } from '../../src/core/servers/redact.js';
import { startUiServer, tokenMatches, MAX_MESSAGE_BYTES } from '../../src/core/ui-server/index.js';
import type { UiServer } from '../../src/core/ui-server/index.js';
import { CONTRACT_METHODS } from '../../src/shared/contract.js';
import { FakeService } from '../fakes/fake-service.js';
import { holdingServer } from '../fakes/holding-server.js';
import { createRng } from '../../src/core/rng.js';
import { frameMessages } from '../fakes/ui-frames.js';

// Whatever arrives on the door of `servebench ui`, only that client is closed: the server, the other
// clients and the run in progress go on. And nobody without the printed token gets in.

let staticDir: string;
let service: FakeService;
let server: UiServer;
const cleanup: Array<() => void> = [];

beforeEach(async () => {
  staticDir = await mkdtemp(join(tmpdir(), 'sb-door-'));
  await writeFile(join(staticDir, 'index.html'), '<!doctype html><title>servebench</title>');
  service = new FakeService();
  server = await startUiServer({ service, port: 0, staticDir });
});
afterEach(async () => {
  for (const c of cleanup.splice(0)) c();
  await server.close();
  await rm(staticDir, { recursive: true, force: true });
});

interface Client {
  ws: WebSocket;
  next: (pick?: (m: Record<string, unknown>) => boolean) => Promise<Record<string, unknown>>;
  call: (method: string, args: unknown) => Promise<Record<string, unknown>>;
}

let nextId = 1;
/** A well-behaved client (what the page does). */
async function goodClient(s: UiServer = server, headers: Record<string, string> = {}): Promise<Client> {
  const ws = new WebSocket(`ws://127.0.0.1:${s.port}/rpc?token=${s.token}`, { headers });
  cleanup.push(() => ws.terminate());
  const inbox: Array<Record<string, unknown>> = [];
  const waiters: Array<() => void> = [];
  ws.on('error', () => undefined); // a client the server closes may see a reset: the test reads the close code
  ws.on('message', (data) => {
    inbox.push(...frameMessages(data));
    waiters.splice(0).forEach((w) => w());
  });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  const next = async (pick: (m: Record<string, unknown>) => boolean = () => true): Promise<Record<string, unknown>> => {
    for (;;) {
      const i = inbox.findIndex(pick);
      if (i >= 0) return inbox.splice(i, 1)[0] as Record<string, unknown>;
      await new Promise<void>((r) => waiters.push(r));
    }
  };
  const call = (method: string, args: unknown): Promise<Record<string, unknown>> => {
    const id = nextId++;
    ws.send(JSON.stringify({ id, method, args }));
    return next((m) => m.id === id);
  };
  return { ws, next, call };
}

/** Resolves with the close code the server sent (1006 when it just dropped the connection). */
function closeCode(ws: WebSocket): Promise<number> {
  return new Promise((resolve) => ws.once('close', (code) => resolve(code)));
}

/** A raw TCP connection that has done the WebSocket upgrade; what follows is ours to mangle. */
async function rawUpgraded(s: UiServer = server): Promise<{ socket: Socket; closeCode: Promise<number | null> }> {
  const socket = connect(s.port, '127.0.0.1');
  cleanup.push(() => socket.destroy());
  socket.on('error', () => undefined);
  let buffer = Buffer.alloc(0);
  let upgraded: () => void = () => undefined;
  const ready = new Promise<void>((r) => (upgraded = r));
  let settle: (code: number | null) => void = () => undefined;
  const code = new Promise<number | null>((r) => (settle = r));
  socket.on('data', (chunk: Buffer) => {
    buffer = Buffer.concat([buffer, chunk]);
    const end = buffer.indexOf('\r\n\r\n');
    if (end >= 0 && buffer.subarray(0, 12).toString() === 'HTTP/1.1 101') {
      buffer = buffer.subarray(end + 4);
      upgraded();
      // Only frames from here on; the 101 line is never seen again.
      buffer = Buffer.concat([Buffer.from('X'), buffer]);
    }
    if (buffer[0] === 0x58) {
      // Walk the server's (unmasked) frames for a close frame.
      let at = 1;
      while (buffer.length - at >= 2) {
        const opcode = (buffer[at] as number) & 0x0f;
        let len = (buffer[at + 1] as number) & 0x7f;
        let head = 2;
        if (len === 126) {
          if (buffer.length - at < 4) break;
          len = buffer.readUInt16BE(at + 2);
          head = 4;
        } else if (len === 127) {
          if (buffer.length - at < 10) break;
          len = Number(buffer.readBigUInt64BE(at + 2));
          head = 10;
        }
        if (buffer.length - at < head + len) break;
        if (opcode === 0x8) settle(len >= 2 ? buffer.readUInt16BE(at + head) : 1005);
        at += head + len;
      }
      buffer = Buffer.concat([Buffer.from('X'), buffer.subarray(at)]);
    }
  });
  socket.on('close', () => settle(null));
  socket.write(
    `GET /rpc?token=${s.token} HTTP/1.1\r\nHost: 127.0.0.1:${s.port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
      `Sec-WebSocket-Key: ${Buffer.from('0123456789abcdef').toString('base64')}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
  );
  await ready;
  return { socket, closeCode: code };
}

/** One WebSocket frame as a client would send it (masked unless told otherwise). */
function frame(
  opcode: number,
  payload: Buffer,
  opts: { mask?: boolean; fin?: boolean; declaredLength?: number } = {},
): Buffer {
  const mask = opts.mask ?? true;
  const len = opts.declaredLength ?? payload.length;
  const head: number[] = [((opts.fin ?? true) ? 0x80 : 0) | opcode];
  const m = mask ? 0x80 : 0;
  if (len < 126) head.push(m | len);
  else if (len < 65536) head.push(m | 126, len >> 8, len & 0xff);
  else {
    head.push(m | 127);
    const big = Buffer.alloc(8);
    big.writeBigUInt64BE(BigInt(len));
    head.push(...big);
  }
  if (!mask) return Buffer.concat([Buffer.from(head), payload]);
  const key = Buffer.from([0x12, 0x34, 0x56, 0x78]);
  const body = Buffer.from(payload.map((b, i) => b ^ (key[i % 4] as number)));
  return Buffer.concat([Buffer.from(head), key, body]);
}

/** The server still serves: a client connected before the attack gets a new event, a new client an answer, the run is still active. */
async function stillServes(watcher: Client, tag: string): Promise<void> {
  service.emit({ type: 'message', severity: 'info', text: tag });
  expect(await watcher.next((m) => (m.event as { text?: string } | undefined)?.text === tag)).toBeTruthy();
  const fresh = await goodClient();
  expect(await fresh.call('listPresets', [])).toMatchObject({ result: [{ name: 'sim-demo' }] });
  expect(await fresh.call('activeRun', [])).toMatchObject({ result: { runId: 'r1' } });
}

/** A run in progress and a client watching it, before each attack. */
async function runInProgress(): Promise<Client> {
  const watcher = await goodClient();
  expect(await watcher.call('startRun', [{ concurrency: [1] }])).toMatchObject({ result: { runId: 'r1' } });
  return watcher;
}

function get(path: string, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: server.port, path, headers }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}

function referrerPolicy(path: string): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: server.port, path }, (res) => {
      res.resume();
      resolve(res.headers['referrer-policy'] as string | undefined);
    });
    req.on('error', reject);
    req.end();
  });
}

/** The HTTP status an upgrade to `path` gets (101 when it is let in). */
function upgradeStatus(path: string, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve) => {
    const ws = new WebSocket(`ws://127.0.0.1:${server.port}${path}`, { headers });
    cleanup.push(() => ws.terminate());
    ws.on('unexpected-response', (_req, res) => {
      resolve(res.statusCode ?? 0);
      ws.terminate();
    });
    ws.on('open', () => resolve(101));
    ws.on('error', () => undefined);
  });
}

describe('bad frames close only their own client', () => {
  it('a message over 4 MB: that client is closed with 1009, the server and the run go on', async () => {
    const watcher = await runInProgress();
    const bad = await goodClient();
    const closed = closeCode(bad.ws);
    bad.ws.send('x'.repeat(MAX_MESSAGE_BYTES + 1));
    expect(await closed).toBe(1009);
    await stillServes(watcher, 'after oversized');
  });

  it('a frame header announcing 5 GB: closed with 1009 before any payload, the server goes on', async () => {
    const watcher = await runInProgress();
    const raw = await rawUpgraded();
    raw.socket.write(frame(0x1, Buffer.from('{}'), { declaredLength: 5 * 1024 ** 3 }).subarray(0, 14));
    expect(await raw.closeCode).toBe(1009);
    await stillServes(watcher, 'after 5 GB header');
  });

  it('a text frame with invalid UTF-8: closed with 1007, the server and the run go on', async () => {
    const watcher = await runInProgress();
    const raw = await rawUpgraded();
    raw.socket.write(frame(0x1, Buffer.from([0x7b, 0xff, 0xfe, 0xc3, 0x28, 0x7d])));
    expect(await raw.closeCode).toBe(1007);
    await stillServes(watcher, 'after bad utf-8');
  });

  it('a reserved opcode: closed with 1002 (protocol error), the server goes on', async () => {
    const watcher = await runInProgress();
    const raw = await rawUpgraded();
    raw.socket.write(frame(0x3, Buffer.from('hi')));
    expect(await raw.closeCode).toBe(1002);
    await stillServes(watcher, 'after bad opcode');
  });

  it('an unmasked client frame: closed with 1002, the server goes on', async () => {
    const watcher = await runInProgress();
    const raw = await rawUpgraded();
    raw.socket.write(frame(0x1, Buffer.from('{"id":1}'), { mask: false }));
    expect(await raw.closeCode).toBe(1002);
    await stillServes(watcher, 'after unmasked');
  });

  it('RSV bits set and a fragmented control frame: closed with 1002, the server goes on', async () => {
    const watcher = await runInProgress();
    const rsv = await rawUpgraded();
    const f = frame(0x1, Buffer.from('{}'));
    f[0] = (f[0] as number) | 0x40;
    rsv.socket.write(f);
    expect(await rsv.closeCode).toBe(1002);
    const ctl = await rawUpgraded();
    ctl.socket.write(frame(0x9, Buffer.from('ping'), { fin: false }));
    expect(await ctl.closeCode).toBe(1002);
    await stillServes(watcher, 'after rsv');
  });

  it('a binary frame: answered with one line and closed with 1003, the server goes on', async () => {
    const watcher = await runInProgress();
    const bad = await goodClient();
    const closed = closeCode(bad.ws);
    bad.ws.send(Buffer.from([1, 2, 3]), { binary: true });
    expect(await bad.next((m) => m.id === null)).toEqual({
      id: null,
      error: 'bad message: binary frames are not accepted; send JSON text',
    });
    expect(await closed).toBe(1003);
    await stillServes(watcher, 'after binary');
  });

  it('random bytes on the raw socket after the upgrade (300 seeded rounds): the server and the run go on', async () => {
    const watcher = await runInProgress();
    const next = createRng(8);
    for (let round = 0; round < 300; round++) {
      const raw = await rawUpgraded();
      const bytes = Buffer.from(Array.from({ length: 1 + Math.floor(next() * 64) }, () => Math.floor(next() * 256)));
      // Half of them start like a frame, to get past the first checks.
      if (round % 2 === 0) bytes[0] = 0x81;
      raw.socket.end(bytes);
      await raw.closeCode;
    }
    await stillServes(watcher, 'after random bytes');
  });

  it('random frames on one connection each (200 seeded: any opcode, mask, length, payload): the server goes on', async () => {
    const watcher = await runInProgress();
    const next = createRng(9);
    for (let round = 0; round < 200; round++) {
      const raw = await rawUpgraded();
      const payload = Buffer.from(Array.from({ length: Math.floor(next() * 200) }, () => Math.floor(next() * 256)));
      raw.socket.end(frame(Math.floor(next() * 16), payload, { mask: next() < 0.8, fin: next() < 0.8 }));
      await raw.closeCode;
    }
    await stillServes(watcher, 'after random frames');
  });
});

describe('bad messages get one line and the connection stays', () => {
  it('huge JSON (3.9 MB) and JSON that is not a call: one-line errors, the connection stays', async () => {
    const watcher = await runInProgress();
    const c = await goodClient();
    const huge = JSON.stringify({
      id: 'h',
      method: 'startRun',
      args: [{ label: 'x'.repeat(MAX_MESSAGE_BYTES - 100_000) }],
    });
    c.ws.send(huge);
    // The fake service refuses a second run; what matters is one line back and the connection kept.
    expect(await c.next((m) => m.id === 'h')).toMatchObject({ error: expect.stringMatching(/^[^\n]+$/) });
    for (const text of ['null', '42', '"str"', '[1,2]', 'true', '{"id":{"x":1},"method":"listRuns","args":[]}']) {
      c.ws.send(text);
      const reply = await c.next((m) => m.id === null);
      expect(typeof reply.error === 'string' || reply.result !== undefined).toBe(true);
    }
    expect(await c.call('listPresets', [])).toMatchObject({ result: [{ name: 'sim-demo' }] });
    await stillServes(watcher, 'after huge');
  });

  it('JSON nested 200 000 deep: a one-line error, the connection stays', async () => {
    const c = await goodClient();
    const deep = '['.repeat(200_000) + ']'.repeat(200_000);
    c.ws.send(`{"id":"deep","method":"startRun","args":[{"serverVariants":[${deep}]}]}`);
    const reply = await c.next((m) => m.id === 'deep');
    expect(reply.error).toEqual(expect.any(String));
    expect(String(reply.error)).not.toContain('\n');
    c.ws.send(`{"id":"deep2","method":"getRun","args":${deep}}`);
    expect((await c.next((m) => m.id === 'deep2')).error).toEqual(expect.any(String));
    expect(await c.call('listPresets', [])).toMatchObject({ result: [{ name: 'sim-demo' }] });
  });

  it('wrong argument types for every method: one line each, the service never sees them', async () => {
    const c = await goodClient();
    const wrong: unknown[] = [null, 7, 'x', {}, [null], [[]], [{ concurrency: 'all' }], [1, 2, 3], [{ server: 5 }]];
    for (const method of CONTRACT_METHODS) {
      for (const args of wrong) {
        const reply = await c.call(method, args);
        if (reply.error === undefined) continue; // e.g. listRuns([]) is a valid call
        expect(String(reply.error)).not.toContain('\n');
      }
    }
    const reached = service.calls.filter((x) => x.method !== 'listPresets' && x.method !== 'activeRun');
    for (const call of reached)
      expect(call.args.every((a) => typeof a === 'string' || typeof a === 'object')).toBe(true);
    expect(await c.call('listPresets', [])).toMatchObject({ result: [{ name: 'sim-demo' }] });
  });
});

describe('the door needs the printed token', () => {
  it('/rpc without a token (another local user, no Origin): refused with 403, no call reaches the service', async () => {
    expect(await upgradeStatus('/rpc')).toBe(403);
    expect(await upgradeStatus('/rpc?token=')).toBe(403);
    expect(service.calls).toEqual([]);
  });

  it('/rpc with a wrong token (same length, one character off, or longer): refused with 403', async () => {
    const t = server.token;
    const flipped = `${t.slice(0, -1)}${t.endsWith('A') ? 'B' : 'A'}`;
    expect(await upgradeStatus(`/rpc?token=${flipped}`)).toBe(403);
    expect(await upgradeStatus(`/rpc?token=${t}x`)).toBe(403);
    expect(tokenMatches(t, t)).toBe(true);
    expect(tokenMatches(flipped, t)).toBe(false);
    expect(tokenMatches(undefined, t)).toBe(false);
  });

  it('the right token from a foreign Origin or Host: refused with 403 (a web page cannot use a leaked token)', async () => {
    expect(await upgradeStatus(`/rpc?token=${server.token}`, { origin: 'http://evil.example' })).toBe(403);
    expect(await upgradeStatus(`/rpc?token=${server.token}`, { host: 'evil.example' })).toBe(403);
    expect(await upgradeStatus(`/rpc?token=${server.token}`, { origin: `http://127.0.0.1:${server.port}` })).toBe(101);
  });

  it('the page without a token: served (only /rpc needs it), and the printed URL carries a new token at each start', async () => {
    expect(await get('/')).toBe(200);
    expect(await referrerPolicy('/')).toBe('no-referrer');
    expect(server.url).toBe(`http://127.0.0.1:${server.port}/?token=${server.token}`);
    expect(server.token.length).toBeGreaterThanOrEqual(32);
    const other = await startUiServer({ service, port: 0, staticDir });
    expect(other.token).not.toBe(server.token);
    await other.close();
  });

  it('a raw socket that sends a half upgrade and vanishes, or HTTP garbage: the server goes on', async () => {
    for (const text of [
      'GET /rpc HTTP/1.1\r\nUpgrade: websocket\r\n',
      '\x00\x01\x02 not http at all\r\n\r\n',
      `GET /rpc?token=${server.token} HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n\r\n`,
    ]) {
      const socket = connect(server.port, '127.0.0.1');
      socket.on('error', () => undefined);
      await new Promise<void>((r) => socket.once('connect', () => r()));
      // Sent and gone: the server may wait for the rest of the headers (Node's header time-out ends that).
      await new Promise<void>((r) => socket.end(text, () => r()));
      socket.destroy();
    }
    const c = await goodClient();
    expect(await c.call('listPresets', [])).toMatchObject({ result: [{ name: 'sim-demo' }] });
  });
});

describe('one run at a time, over the socket', () => {
  it('two startRun sent together from two tabs: one run starts, the other gets "a run is already in progress"', async () => {
    const out = await mkdtemp(join(tmpdir(), 'sb-door-runs-'));
    const real = createServebenchService({ outDir: out, deps: { startServer: holdingServer() } });
    const ui = await startUiServer({ service: real, port: 0, staticDir });
    try {
      const a = await goodClient(ui);
      const b = await goodClient(ui);
      const config = [{ concurrency: [1], inputLen: [16], outputLen: [4], rounds: 1, requestsPerRound: 4, warmup: 0 }];
      const [ra, rb] = await Promise.all([a.call('startRun', config), b.call('startRun', config)]);
      const ok = [ra, rb].filter((r) => r.result);
      const refused = [ra, rb].filter((r) => r.error);
      expect(ok).toHaveLength(1);
      expect(refused).toHaveLength(1);
      expect(refused[0]?.error).toMatch(/^a run is already in progress: /);
      await real.cancelRun((ok[0]?.result as { runId: string }).runId);
    } finally {
      await ui.close();
      await rm(out, { recursive: true, force: true });
    }
  });
});

describe('no secret goes back to any client', () => {
  const secrets = [
    'pw-secret-1',
    'openai-secret-2',
    'db-secret-3',
    'hf_secretsecretsecret4',
    'flag-secret-5',
    'flag-secret-6',
    'client-secret-7',
    'preset-secret-8',
    'bearer-secret-9',
  ];

  it('secrets in env (OPENAI_KEY, DB_PASS, HF_TOKEN), flags, the API key and URLs: never in activeRun, events, replay, getRun, listRuns, presets or run.json', async () => {
    const out = await mkdtemp(join(tmpdir(), 'sb-door-secrets-'));
    // A careless engine echoes its arguments and environment.
    const echo = holdingServer([
      "non-default args: {'api_key': ['flag-secret-5'], 'admin_auth': 'flag-secret-6'}",
      'env OPENAI_KEY=openai-secret-2 DB_PASS=db-secret-3 HF_TOKEN=hf_secretsecretsecret4',
      'connecting to http://admin:pw-secret-1@127.0.0.1:9/v1 with Authorization: Bearer bearer-secret-9',
    ]);
    const real = createServebenchService({
      outDir: out,
      deps: { startServer: echo },
      listPresets: () => [
        { name: 'p', description: 'd', server: { engine: 'vllm', env: { MY_AUTH: 'preset-secret-8' } } },
      ],
    });
    const ui = await startUiServer({ service: real, port: 0, staticDir });
    try {
      const seen: string[] = [];
      const a = await goodClient(ui);
      a.ws.on('message', (d) => seen.push(String(d)));
      const started = await a.call('startRun', [
        {
          concurrency: [1],
          inputLen: [16],
          outputLen: [4],
          rounds: 1,
          requestsPerRound: 4,
          warmup: 0,
          apiKey: 'client-secret-7',
          server: {
            engine: 'attach',
            url: 'http://admin:pw-secret-1@127.0.0.1:9/v1',
            env: { OPENAI_KEY: 'openai-secret-2', DB_PASS: 'db-secret-3', HF_TOKEN: 'hf_secretsecretsecret4' },
            extraArgs: ['--api-key', 'flag-secret-5', '--admin-auth=flag-secret-6', '--max-num-batched-tokens', '8192'],
          },
        },
      ]);
      const runId = (started.result as { runId: string }).runId;
      await a.next((m) => (m.event as { line?: string } | undefined)?.line?.includes('Authorization') ?? false);
      const late = await goodClient(ui);
      late.ws.on('message', (d) => seen.push(String(d)));
      const active = await late.call('activeRun', []);
      const replay = await late.call('liveEvents', []);
      await real.cancelRun(runId);
      const record = await late.call('getRun', [runId]);
      const runs = await late.call('listRuns', []);
      const presets = await late.call('listPresets', []);
      const onDisk = await readFile(join(out, runId, 'run.json'), 'utf8');
      const everything = [JSON.stringify([started, active, replay, record, runs, presets]), ...seen, onDisk].join('\n');
      for (const s of secrets) expect(everything, s).not.toContain(s);
      // What is not secret stays readable.
      expect(JSON.stringify(active)).toContain('--max-num-batched-tokens","8192"');
      expect(JSON.stringify(active)).toContain('"OPENAI_KEY":"***"');
      expect(JSON.stringify(replay)).toContain('non-default args');
    } finally {
      await ui.close();
      await rm(out, { recursive: true, force: true });
    }
  });

  it('env and flag names with KEY, TOKEN, SECRET, PASS, AUTH, CREDENTIAL or BEARER: secret (token counts and tokenizers are not)', () => {
    for (const name of [
      'OPENAI_KEY',
      'DB_PASS',
      'db_password',
      'MY_CREDENTIALS',
      'BEARER',
      'X_AUTH',
      'hfToken',
      '--admin-api-key',
    ])
      expect(isSecretName(name), name).toBe(true);
    for (const name of [
      'TOKENIZERS_PARALLELISM',
      '--max-num-batched-tokens',
      '--tokenizer',
      'CUDA_VISIBLE_DEVICES',
      'HF_HOME',
    ])
      expect(isSecretName(name), name).toBe(false);
    expect(redactArgv(['--db-pass', 'hunter22', '--enable-auth', '--port', '1', '--x-token=abc'])).toEqual([
      '--db-pass',
      '***',
      '--enable-auth',
      '--port',
      '1',
      '--x-token=***',
    ]);
    expect(redact({ env: { OPENAI_KEY: 'k', DB_PASS: 'p', A: '1' } }).env).toEqual({
      OPENAI_KEY: '***',
      DB_PASS: '***',
      A: '1',
    });
  });

  it('server.log lines echoing secrets: cleaned by name, flag, shape and known value; counts left alone', () => {
    expect(redactLine('OPENAI_KEY=abcdef123 DB_PASS="hunter22"')).toBe('OPENAI_KEY=*** DB_PASS="***"');
    expect(redactLine('--db-password hunter22 --port 8000')).toBe('--db-password *** --port 8000');
    expect(redactLine("{'hf_token': 'abcdefgh12'}")).toBe("{'hf_token': '***'}");
    expect(redactLine('postgres://u:pa55word@db/x')).toBe('postgres://u:***@db/x');
    expect(redactLine('uses my-own-value here', ['my-own-value'])).toBe('uses *** here');
    for (const line of [
      'KV Cache is allocated. #tokens: 12345',
      'Decode batch. #running-req: 1, #token: 1234, token usage: 0.01',
      'GPU KV cache size: 81,920 tokens',
      'Maximum concurrency for 8192 tokens per request: 10.00x',
      'max_num_batched_tokens=8192 enable_auth=false',
    ])
      expect(redactLine(line), line).toBe(line);
  });
});

describe('servebench ui on a port that is taken', () => {
  it('--port <taken>: one line naming the fix, exit status 2, no stack trace', async () => {
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', () => r()));
    const port = (blocker.address() as { port: number }).port;
    try {
      const error = await uiCommand(['--port', String(port), '--out', staticDir], { staticDir }).then(
        () => null,
        (e: unknown) => e,
      );
      expect(isUserError(error)).toBe(true);
      expect((error as { exitCode: number }).exitCode).toBe(2);
      expect((error as Error).message).toBe(
        `port ${port} is already in use (another servebench ui?); pick another with --port (0 = any free port)`,
      );
    } finally {
      blocker.close();
    }
  });
});
