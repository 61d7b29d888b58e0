import { spawn, spawnSync } from 'node:child_process';
import { appendFile as appendRaw, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { benchConfigFromFlags } from '../../src/cli/run-options.js';
import { checkServerAddress } from '../../src/cli/server-options.js';
import { createServebenchService } from '../../src/core/api.js';
import { runBenchmark } from '../../src/core/benchmark.js';
import { UserError } from '../../src/core/errors.js';
import { readContextLimit } from '../../src/core/load/context-limit.js';
import { diskErrorOf, nodeRunFs, type RunFs } from '../../src/core/runs/run-fs.js';
import { RunWriter, createRunDir, listRuns, loadRun } from '../../src/core/runs/run-store.js';
import { streamRequests } from '../../src/core/run-folder/read-lines.js';
import { requestLines, requestRecord } from '../core/run-folder/request-lines.js';
import { withLiveStatus, type ProcessProbe } from '../../src/core/runs/writer-identity.js';
import { waitGroupGone } from '../../src/core/servers/process-group.js';
import type { RunningServer, StartServer } from '../../src/core/servers/types.js';
import { BenchConfigSchema } from '../../src/shared/config.js';
import type { BenchConfigInput } from '../../src/shared/config.js';
import type { RunRecord } from '../../src/shared/run-record.js';
import { startFakeOpenAi } from '../fakes/fake-openai-server.js';
import type { FakeOpenAiServer } from '../fakes/fake-openai-server.js';
import { FAKE_PYTHON, alivePids, launchedPids } from '../core/servers/helpers.js';

let out: string;
let fake: FakeOpenAiServer | null = null;
beforeEach(async () => {
  out = await mkdtemp(join(tmpdir(), 'sb-faults-data-'));
});
afterEach(async () => {
  await fake?.close();
  fake = null;
  await rm(out, { recursive: true, force: true });
});

// ---- helpers -------------------------------------------------------------------------------------

function enospc(path: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`ENOSPC: no space left on device, write '${path}'`), { code: 'ENOSPC' });
}

/**
 * A disk that fills up: files for which `affects` holds share `room` bytes; a write that does not fit
 * writes what fits (as a real disk does) and then fails with ENOSPC.
 */
function fillingDisk(room: number, affects: (path: string) => boolean): RunFs & { full: () => boolean } {
  let left = room;
  const take = (path: string, data: string | Uint8Array): Buffer | null => {
    const bytes = Buffer.from(data);
    if (!affects(path) || bytes.length <= left) {
      if (affects(path)) left -= bytes.length;
      return null;
    }
    const fits = bytes.subarray(0, left);
    left = 0;
    return fits;
  };
  return {
    ...nodeRunFs,
    full: () => left === 0,
    async writeFile(path, data) {
      const partial = take(path, data);
      if (!partial) return nodeRunFs.writeFile(path, data);
      await writeFile(path, partial);
      throw enospc(path);
    },
    async appendFile(path, data) {
      const partial = take(path, data);
      if (!partial) return nodeRunFs.appendFile(path, data);
      await appendRaw(path, partial);
      throw enospc(path);
    },
    writeFileSync(path, data) {
      if (take(path, data)) throw enospc(path);
      nodeRunFs.writeFileSync(path, data);
    },
  };
}

function attachTo(url: string, calls: { starts: number } = { starts: 0 }): StartServer {
  return async () => {
    calls.starts++;
    const server: RunningServer = {
      info: { engine: 'attach', baseUrl: url, model: 'fake-model', simulated: false },
      died: new Promise(() => undefined),
      exited: false,
      hasDied: () => null,
      stop: async () => undefined,
      logTail: () => [],
    };
    return server;
  };
}

function config(extra: BenchConfigInput = {}): ReturnType<typeof BenchConfigSchema.parse> {
  return BenchConfigSchema.parse({
    out,
    label: 'faults',
    concurrency: [1, 2],
    inputLen: [20],
    outputLen: [4],
    rounds: 2,
    requestsPerRound: 4,
    warmup: 0,
    server: { engine: 'attach', url: fake?.url ?? 'http://127.0.0.1:9' },
    ...extra,
  });
}

async function allFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true });
  return entries.map(String);
}

/** Every line of a jsonl file parses and the file ends with a newline (or is empty / absent). */
async function wholeLines(file: string): Promise<number> {
  const text = await readFile(file, 'utf8').catch(() => '');
  if (text === '') return 0;
  expect(text.endsWith('\n')).toBe(true);
  const lines = text.trimEnd().split('\n');
  for (const line of lines) expect(() => JSON.parse(line) as unknown).not.toThrow();
  return lines.length;
}

const deadProbe = (host: string): ProcessProbe => ({ hostname: host, alive: () => false, startKey: () => undefined });

// ---- 1. disk full, unwritable --out ----------------------------------------------------------------

describe('disk full and unwritable --out', () => {
  it('disk fills up while requests.jsonl grows: run stops with exit 2, files whole, no temp files, run.json failed with the reason', async () => {
    fake = await startFakeOpenAi({ tokenize: true });
    const disk = fillingDisk(1500, (p) => p.endsWith('requests.jsonl'));
    const result = await runBenchmark(config(), { startServer: attachTo(fake.url), runFs: disk });
    expect(disk.full()).toBe(true);
    expect(result.exitCode).toBe(2);
    expect(result.failure).toMatch(
      /cannot write .*requests\.jsonl: the disk is full \(ENOSPC\); free space on it or choose another --out$/,
    );
    expect(result.failure?.split('\n')).toHaveLength(1);
    // The run stopped instead of measuring what it could not keep.
    expect(result.record.levels.length).toBeLessThan(2);
    const onDisk = JSON.parse(await readFile(join(result.dir, 'run.json'), 'utf8')) as RunRecord;
    expect(onDisk.status).toBe('failed');
    expect(onDisk.error).toBe(result.failure);
    await wholeLines(join(result.dir, 'requests.jsonl'));
    const csv = await readFile(join(result.dir, 'summary.csv'), 'utf8');
    expect(csv.split('\n')[0]).toContain('output_tok_s');
    expect((await allFiles(out)).filter((f) => f.endsWith('.tmp') || f.includes('write-check'))).toEqual([]);
  });

  it('disk full for every file, run.json included: the last whole run.json stays, the line says it could not be updated, readers show interrupted once the writer is gone', async () => {
    fake = await startFakeOpenAi({ tokenize: true });
    // The disk fills up once the first run.json is on it (whatever its size), with a little room left.
    const disk = fillingDisk(2000, (p) => existsSync(join(dirname(p), 'run.json')));
    const result = await runBenchmark(config(), { startServer: attachTo(fake.url), runFs: disk });
    expect(result.exitCode).toBe(2);
    expect(result.failure).toMatch(
      /cannot write .*: the disk is full \(ENOSPC\); free space on it or choose another --out; run\.json could not be updated either \(it will read as interrupted\)$/,
    );
    const text = await readFile(join(result.dir, 'run.json'), 'utf8');
    const onDisk = JSON.parse(text) as RunRecord; // whole, not cut
    expect(onDisk.status).toBe('running');
    expect(withLiveStatus(onDisk, deadProbe(onDisk.writer?.hostname ?? '')).status).toBe('interrupted');
    await wholeLines(join(result.dir, 'requests.jsonl'));
    await wholeLines(join(result.dir, 'telemetry.jsonl'));
    // summary.csv could not be written: it is absent, never empty or cut.
    expect(await readdir(result.dir)).not.toContain('summary.csv');
    expect((await allFiles(out)).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('an append that fails part-way: the file is cut back to its last whole line and the writer stops appending', async () => {
    const dir = await createRunDir(out, 'append', new Date());
    const disk = fillingDisk(100, () => true);
    const writer = new RunWriter(dir, { fs: disk });
    await writer.appendLines('requests.jsonl', ['{"a":1}', '{"b":2}']);
    await writer.appendLines('requests.jsonl', [JSON.stringify({ long: 'x'.repeat(200) })]);
    await writer.appendLines('requests.jsonl', ['{"c":3}']);
    await writer.flush();
    expect(await readFile(join(dir, 'requests.jsonl'), 'utf8')).toBe('{"a":1}\n{"b":2}\n');
    expect(writer.fatal?.code).toBe('ENOSPC');
    expect(writer.fatalSignal.aborted).toBe(true);
  });

  it('a replace that fails (run.json, summary.csv, the forced-exit sync write): the old file stays whole and no temp file is left', async () => {
    const dir = await createRunDir(out, 'replace', new Date());
    await new RunWriter(dir).writeText('summary.csv', 'old\n');
    const writer = new RunWriter(dir, { fs: fillingDisk(3, () => true) });
    await writer.writeText('summary.csv', 'new content\n');
    expect(() => writer.writeRecordSync({ status: 'cancelled' } as RunRecord)).toThrow(/ENOSPC/);
    await writer.flush();
    expect(await readFile(join(dir, 'summary.csv'), 'utf8')).toBe('old\n');
    expect((await readdir(dir)).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('a file the server needs cannot be written (ENOSPC on its path): a one-line disk failure, not an internal error', () => {
    const raw = Object.assign(new Error("ENOSPC: no space left on device, open '/r/x.yaml'"), {
      code: 'ENOSPC',
      path: '/r/x.yaml',
      syscall: 'open',
    });
    expect(diskErrorOf(raw)?.message).toBe(
      'cannot write /r/x.yaml: the disk is full (ENOSPC); free space on it or choose another --out',
    );
    expect(
      diskErrorOf(Object.assign(new Error('spawn'), { code: 'EACCES', path: 'python', syscall: 'spawn python' })),
    ).toBeNull();
  });

  it('--out read-only (EROFS): one line before any server is launched, exit 2', async () => {
    const readOnly: RunFs = {
      ...nodeRunFs,
      writeFile: async (p) => {
        throw Object.assign(new Error(`EROFS: read-only file system, open '${p}'`), { code: 'EROFS' });
      },
    };
    const calls = { starts: 0 };
    const error = await runBenchmark(config(), {
      startServer: attachTo('http://127.0.0.1:9', calls),
      runFs: readOnly,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UserError);
    expect((error as UserError).exitCode).toBe(2);
    expect((error as Error).message).toMatch(
      /^--out .*: cannot write there: the file system is read-only; choose a writable --out$/,
    );
    expect(calls.starts).toBe(0);
    expect(await readdir(out)).toEqual([]);
  });

  it('--out is a file, or /dev/null: one line naming the fix, no server launched, exit 2', async () => {
    const file = join(out, 'a-file');
    await writeFile(file, 'x');
    for (const bad of [file, '/dev/null', join(file, 'below')]) {
      const calls = { starts: 0 };
      const error = await runBenchmark(config({ out: bad }), {
        startServer: attachTo('http://127.0.0.1:9', calls),
      }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(UserError);
      expect((error as Error).message).toMatch(/^--out .*(is not a folder|a file is in the way)/);
      expect(calls.starts).toBe(0);
    }
  });

  it('--out /dev/null on the command line: one line on stderr, no stack trace, exit 2', () => {
    const cli = fileURLToPath(new URL('../../bin/servebench.js', import.meta.url));
    const res = spawnSync(process.execPath, [cli, 'run', '--out', '/dev/null'], { encoding: 'utf8', timeout: 60_000 });
    expect(res.status).toBe(2);
    expect(res.stderr.trim().split('\n')).toEqual([
      'servebench run: --out /dev/null is not a folder; choose a folder (created if missing)',
    ]);
  });
});

// ---- 2. the CLI killed with SIGKILL ------------------------------------------------------------------

const OWNER = `
import { createServerManager } from ${JSON.stringify(fileURLToPath(new URL('../../src/core/servers/manager.ts', import.meta.url)))};
import { RunWriter, createRunDir } from ${JSON.stringify(fileURLToPath(new URL('../../src/core/runs/run-store.ts', import.meta.url)))};
const [python, out, recordFile, ignore] = process.argv.slice(2);
const dir = await createRunDir(out, 'killed', new Date());
const writer = new RunWriter(dir);
await writer.writeRecord({ schemaVersion: 1, id: 'killed', label: 'killed', startedAt: new Date().toISOString(), finishedAt: null,
  status: 'running', simulated: false,
  config: { concurrency: [1], inputLen: [8], outputLen: [8], rounds: 1, server: { engine: 'vllm' } },
  environment: { host: { hostname: 'h', os: 'linux', cpus: 1, node: process.version }, servebenchVersion: '0.0.0',
    engine: { kind: 'vllm', simulated: false } },
  clock: { originMonoNs: '0', originWall: new Date().toISOString() }, levels: [], checks: [] });
const manager = createServerManager({ pollMs: 50, grace: { interruptMs: 5000, terminateMs: 1000, killMs: 5000 } });
const server = await manager.start(
  { engine: 'vllm', model: 'm', python, host: '127.0.0.1', port: 0, env: { FAKE_ENGINE_MODE: 'ok', FAKE_ENGINE_RECORD: recordFile, FAKE_ENGINE_IGNORE: ignore ?? '' },
    extraArgs: [], startTimeoutMs: 60000 },
  { runDir: dir },
);
process.stdout.write(JSON.stringify({ pgid: server.info.pid, dir }) + '\\n');
setInterval(() => undefined, 1000);
`;

let ownerScript = '';
beforeAll(async () => {
  const dir = await mkdtemp(join(tmpdir(), 'sb-faults-owner-'));
  const entry = join(dir, 'owner.ts');
  ownerScript = join(dir, 'owner.mjs');
  await writeFile(entry, OWNER);
  await build({
    entryPoints: [entry],
    outfile: ownerScript,
    bundle: true,
    platform: 'node',
    format: 'esm',
    logLevel: 'error',
  });
});

async function killOwner(ignore: string): Promise<{ pgid: number; dir: string; pids: number[]; runs: string }> {
  const recordFile = join(out, 'fake-record.jsonl');
  const runs = join(out, 'runs');
  const child = spawn(process.execPath, [ownerScript, FAKE_PYTHON, runs, recordFile, ignore], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const first = await new Promise<string>((resolve, reject) => {
    let buffer = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      buffer += d;
      if (buffer.includes('\n')) resolve(buffer.split('\n')[0] as string);
    });
    child.once('exit', (code) => reject(new Error(`owner exited early (${code})`)));
  });
  const { pgid, dir } = JSON.parse(first) as { pgid: number; dir: string };
  const pids = launchedPids(recordFile);
  expect(alivePids(pids).length).toBeGreaterThan(0);
  expect((await loadRun(dir)).status).toBe('running');
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.once('exit', (_c, s) => resolve(s)));
  child.kill('SIGKILL');
  expect(await exited).toBe('SIGKILL');
  return { pgid, dir, pids, runs };
}

describe('the CLI killed with SIGKILL (what the OOM killer does)', () => {
  it('kill -9 of the process that launched the engine: the engine group dies too, and the run folder reads as interrupted', async () => {
    const { pgid, dir, pids, runs } = await killOwner('');
    expect(await waitGroupGone(pgid, 60_000)).toBe(true);
    expect(alivePids(pids)).toEqual([]);
    const record = await loadRun(dir);
    expect(record.status).toBe('interrupted');
    expect(record.error).toMatch(/ended without finishing it/);
    expect((await listRuns(runs)).map((r) => r.status)).toEqual(['interrupted']);
  }, 120_000);

  it('kill -9 of the owner while the engine ignores SIGTERM (a stuck worker): the watchdog escalates to SIGKILL', async () => {
    const { pgid, pids } = await killOwner('SIGINT,SIGTERM');
    expect(await waitGroupGone(pgid, 60_000)).toBe(true);
    expect(alivePids(pids)).toEqual([]);
  }, 120_000);

  it('a running run whose writer pid was reused by another process reads as interrupted; one written on another host or without a writer stays running', () => {
    const record = {
      status: 'running',
      writer: { pid: 4242, hostname: 'here', processStart: 'boot/100' },
    } as unknown as RunRecord;
    const reused: ProcessProbe = { hostname: 'here', alive: () => true, startKey: () => 'boot/999' };
    const same: ProcessProbe = { hostname: 'here', alive: () => true, startKey: () => 'boot/100' };
    expect(withLiveStatus(record, reused).status).toBe('interrupted');
    expect(withLiveStatus(record, same).status).toBe('running');
    expect(withLiveStatus(record, deadProbe('elsewhere')).status).toBe('running');
    expect(withLiveStatus({ status: 'running' } as RunRecord, deadProbe('here')).status).toBe('running');
    expect(withLiveStatus({ ...record, status: 'completed' }, deadProbe('here')).status).toBe('completed');
  });

  it('a requests.jsonl cut mid-line by a killed writer: readers keep the whole lines', async () => {
    const dir = await createRunDir(out, 'cut', new Date());
    await writeFile(join(dir, 'requests.jsonl'), requestLines([requestRecord(1), requestRecord(2)]) + '{"id":3,"ttf');
    const ids: number[] = [];
    const report = await streamRequests(dir, [], (r) => ids.push(r.id));
    expect(ids).toEqual([1, 2]);
    expect(report.cutShortLine).toBe(3);
  });
});

// ---- 3. servebench ui: a double Ctrl-C --------------------------------------------------------------

describe('servebench ui forced to exit', () => {
  it('second Ctrl-C of servebench ui: the service marks the active run cancelled before the process exits', async () => {
    const starting: StartServer = (_config, opts) =>
      new Promise((_resolve, reject) => opts.signal?.addEventListener('abort', () => reject(new Error('aborted'))));
    const service = createServebenchService({ outDir: out, deps: { startServer: starting } });
    const run = await service.startRun({ concurrency: [1], inputLen: [20], outputLen: [4], rounds: 1 });
    service.saveActiveSync?.('forced exit (second Ctrl-C)');
    const onDisk = JSON.parse(await readFile(join(run.dir, 'run.json'), 'utf8')) as RunRecord;
    expect(onDisk.status).toBe('cancelled');
    expect(onDisk.error).toMatch(/second Ctrl-C/);
    await service.cancelRun(run.runId);
  });
});

// ---- 4. limits on what a user can ask ---------------------------------------------------------------

describe('limits on what a user can ask', () => {
  it('--concurrency 1e9, 1e3, 0x10, " 8" style numbers: refused as not written plainly, exit 2', () => {
    for (const v of ['1e9', '1e3', '0x10', '1_000', 'Infinity', '-4', '2.0']) {
      expect(() => benchConfigFromFlags({ concurrency: v }, {})).toThrow(
        /--concurrency must be .*positive integers written plainly/,
      );
    }
    expect(() => benchConfigFromFlags({ rounds: '1e2' }, {})).toThrow(/--rounds must be a positive integer/);
    expect(() => benchConfigFromFlags({ 'gpu-memory': '9e-1' }, {})).toThrow(
      /--gpu-memory must be a number in \(0, 1\]/,
    );
  });

  it('--concurrency 1000000000: refused before starting, naming the bound and why', () => {
    expect(() => benchConfigFromFlags({ concurrency: '1000000000' }, {})).toThrow(
      /^--concurrency 1000000000 is too large: at most 4,096 \(more requests in flight than one client process/,
    );
    expect(() => benchConfigFromFlags({ 'requests-per-round': '1000000' }, {})).toThrow(
      /--requests-per-round 1000000 is too large: at most 100,000/,
    );
    expect(() => benchConfigFromFlags({ rate: '1e6' }, {})).toThrow(/--rate must be/);
    expect(() => benchConfigFromFlags({ timeout: '1000000' }, {})).toThrow(
      /--timeout 1000000 is too large: at most 86400 s/,
    );
  });

  it('a YAML config with concurrency 1e9: refused by the shared bounds, one line', async () => {
    const file = join(out, 'c.yaml');
    await writeFile(file, 'concurrency: [1, 1e9]\n');
    expect(() => benchConfigFromFlags({ config: file }, {})).toThrow(/^invalid setting 'concurrency': at most 4,096/);
  });

  it('the app asks for concurrency 1e9: startRun refuses in one line naming the bound, no run folder', async () => {
    const service = createServebenchService({ outDir: out, deps: { startServer: attachTo('http://127.0.0.1:9') } });
    const error = await service.startRun({ concurrency: [1e9] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UserError);
    expect((error as Error).message).toMatch(/^invalid setting 'concurrency': at most 4,096: /);
    expect(await readdir(out)).toEqual([]);
  });

  it('--input-len 10000000: refused before any calibration, naming the bound', () => {
    expect(() => benchConfigFromFlags({ 'input-len': '10000000' }, {})).toThrow(
      /--input-len 10000000 is too large: at most 1,048,576/,
    );
  });

  it('a sweep of more than a million requests in all: refused before the run folder exists', async () => {
    const error = await runBenchmark(
      config({ concurrency: [4096], requestsPerRound: 100_000, rounds: 20, inputLen: [1] }),
      { startServer: attachTo('http://127.0.0.1:9') },
    ).catch((e: unknown) => e);
    expect((error as Error).message).toMatch(
      /^this sweep plans 2,000,000 requests, more than 1,000,000 .*: lower --concurrency/,
    );
    expect(await readdir(out)).toEqual([]);
  });

  it('--input-len + --output-len past --max-model-len of a launched server: refused before launching', async () => {
    const calls = { starts: 0 };
    const error = await runBenchmark(
      config({ inputLen: [8000], outputLen: [512], server: { engine: 'sim', maxModelLen: 8192 } }),
      { startServer: attachTo('http://127.0.0.1:9', calls) },
    ).catch((e: unknown) => e);
    expect((error as Error).message).toMatch(
      /8,512 tokens per request, more than the server's context of 8,192 \(--max-model-len\)/,
    );
    expect(calls.starts).toBe(0);
  });

  it("--input-len past the attached server's max_model_len (vLLM /v1/models): the run fails at once with exit 2, before calibrating", async () => {
    const { createServer } = await import('node:http');
    const tokenizeCalls: string[] = [];
    const server = createServer((req, res) => {
      if (req.url === '/v1/models') res.end(JSON.stringify({ data: [{ id: 'fake-model', max_model_len: 4096 }] }));
      else {
        tokenizeCalls.push(req.url ?? '');
        res.statusCode = 404;
        res.end('{}');
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    try {
      const result = await runBenchmark(config({ inputLen: [5000], server: { engine: 'attach', url } }), {
        startServer: attachTo(url),
      });
      expect(result.exitCode).toBe(2);
      expect(result.failure).toMatch(
        /5,004 tokens per request, more than the server's context of 4,096 \(max_model_len in \/v1\/models\)/,
      );
      expect(tokenizeCalls).toEqual([]);
    } finally {
      server.close();
    }
  });

  it("reads the server's context: vLLM/SGLang max_model_len in /v1/models, llama.cpp n_ctx in /props, nothing from a server that says nothing", async () => {
    const { createServer } = await import('node:http');
    const serve = async (routes: Record<string, unknown>): Promise<{ url: string; close: () => void }> => {
      const s = createServer((req, res) => {
        const body = routes[req.url ?? ''];
        res.statusCode = body === undefined ? 404 : 200;
        res.end(body === undefined ? 'not found' : JSON.stringify(body));
      });
      await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
      return { url: `http://127.0.0.1:${(s.address() as { port: number }).port}`, close: () => s.close() };
    };
    const vllm = await serve({ '/v1/models': { data: [{ id: 'm', object: 'model', max_model_len: 32768 }] } });
    const llama = await serve({
      '/v1/models': { data: [{ id: 'm', meta: { n_ctx_train: 131072 } }] },
      '/props': { default_generation_settings: { n_ctx: 4096, params: {} }, total_slots: 4 },
    });
    const plain = await serve({ '/v1/models': { data: [{ id: 'm' }] } });
    try {
      expect(await readContextLimit({ baseUrl: vllm.url, model: 'm' })).toEqual({
        tokens: 32768,
        source: 'max_model_len in /v1/models',
      });
      expect(await readContextLimit({ baseUrl: llama.url, model: 'm' })).toEqual({
        tokens: 4096,
        source: 'n_ctx per slot in /props',
        engine: 'llamacpp',
        slots: 4,
      });
      expect(await readContextLimit({ baseUrl: plain.url, model: 'm' })).toBeUndefined();
    } finally {
      vllm.close();
      llama.close();
      plain.close();
    }
  });

  it('--config /dev/zero, a FIFO, or a huge file: refused at once in one line (no hang)', async () => {
    expect(() => benchConfigFromFlags({ config: '/dev/zero' }, {})).toThrow(
      /--config \/dev\/zero is not a regular file/,
    );
    const fifo = join(out, 'fifo');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    expect(() => benchConfigFromFlags({ config: fifo }, {})).toThrow(/is not a regular file/);
    const huge = join(out, 'huge.yaml');
    await writeFile(huge, `# ${'x'.repeat(2 * 1024 * 1024)}\n`);
    expect(() => benchConfigFromFlags({ config: huge }, {})).toThrow(/is larger than 1024 KiB/);
  });

  it('--url or --host that cannot be resolved or bound: one clear line, exit 2, before any run folder', async () => {
    await expect(checkServerAddress({ url: 'http://no-such-host.invalid:8000' })).rejects.toThrow(
      /^--url http:\/\/no-such-host\.invalid:8000: the host 'no-such-host\.invalid' cannot be resolved \(\w+\); check its spelling/,
    );
    await expect(checkServerAddress({ host: 'no-such-host.invalid' })).rejects.toThrow(
      /^--host no-such-host\.invalid cannot be resolved/,
    );
    await expect(checkServerAddress({ host: '192.0.2.1' })).rejects.toThrow(
      /^--host 192\.0\.2\.1 cannot be bound \(EADDRNOTAVAIL\)/,
    );
    await expect(checkServerAddress({ host: '127.0.0.1' })).resolves.toBeUndefined();
    await expect(checkServerAddress({ url: 'http://127.0.0.1:1' })).resolves.toBeUndefined();
    const err = await checkServerAddress({ url: 'http://no-such-host.invalid' }).catch((e: unknown) => e);
    expect((err as UserError).exitCode).toBe(2);
  });
});
