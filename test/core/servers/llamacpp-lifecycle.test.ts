import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { ServerConfigSchema, type ServerConfig } from '../../../src/shared/config.js';
import { createServerManager, type ServerManager } from '../../../src/core/servers/manager.js';
import { ServerConfigError, ServerStartError } from '../../../src/core/servers/server-errors.js';
import type { RunningServer } from '../../../src/core/servers/types.js';
import type { RunRecord } from '../../../src/shared/run-record.js';
import { alivePids, eventLog, launchedPids, makeRun, readRecord } from './helpers.js';
import { exitAgrees, failedBeyondMachine } from '../../fakes/run-checks.js';

const FAKE_LLAMA = fileURLToPath(new URL('../../fakes/llama-server.mjs', import.meta.url));
const CLI = fileURLToPath(new URL('../../../bin/servebench.js', import.meta.url));

const managers: ServerManager[] = [];
function newManager(): ServerManager {
  const m = createServerManager({ pollMs: 50, grace: { interruptMs: 5_000, terminateMs: 5_000, killMs: 5_000 } });
  managers.push(m);
  return m;
}
afterEach(async () => {
  await Promise.all(managers.splice(0).map((m) => m.stopAll()));
});

async function ggufFile(runDir: string): Promise<string> {
  const file = join(runDir, 'tiny-q4_k_m.gguf');
  await writeFile(file, 'GGUF');
  return file;
}

function llamaConfig(recordFile: string, extra: Record<string, unknown> = {}, mode = 'ok'): ServerConfig {
  return ServerConfigSchema.parse({
    engine: 'llamacpp',
    llamaServer: FAKE_LLAMA,
    ...extra,
    env: { FAKE_ENGINE_MODE: mode, FAKE_ENGINE_RECORD: recordFile },
  });
}

async function startError(promise: Promise<RunningServer>): Promise<ServerStartError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ServerStartError);
  return error as ServerStartError;
}

describe('launching llama.cpp (fake llama-server)', () => {
  it('probes the version, waits out /health 503, reads slots and KV size from the log, and stops leaving nothing', async () => {
    const { runDir, recordFile } = await makeRun();
    const model = await ggufFile(runDir);
    const log = eventLog();
    const server = await newManager().start(
      llamaConfig(recordFile, { model, contextSize: 8192, maxSeqs: 4, gpuLayers: 99 }),
      { runDir, onEvent: log.onEvent, largestRequest: { inputTokens: 512, outputTokens: 256 } },
    );
    expect(server.info).toMatchObject({
      engine: 'llamacpp',
      engineVersion: 'b6500 (6c7a4415)',
      model: 'tiny-q4_k_m.gguf', // llama-server's alias: the file name, asked from /v1/models
      simulated: false,
      kvCacheTokens: 8192,
      maxRunningRequests: 4,
      metricsUrl: `${server.info.baseUrl}/metrics`,
    });
    const engine = readRecord(recordFile).find((e) => e.kind === 'engine');
    expect(engine?.argv).toEqual(expect.arrayContaining(['-m', model, '--parallel', '4', '--metrics']));
    // Ready only after the model loaded: the log said so before the manager reported ready.
    const progress = log.events.flatMap((e) => (e.type === 'server-progress' ? [e.key] : []));
    expect(progress).toEqual(['loading', 'weights', 'kv-cache', 'max-running-requests', 'http']);
    expect(log.events.at(-1)).toMatchObject({ type: 'server-state', state: 'ready' });
    expect(log.events.some((e) => e.type === 'message' && e.severity === 'warn')).toBe(false);
    const metrics = await (await fetch(server.info.metricsUrl as string)).text();
    expect(metrics).toContain('llamacpp:requests_processing');

    const pids = launchedPids(recordFile);
    expect(alivePids(pids)).toHaveLength(1);
    await server.stop();
    expect(alivePids(pids)).toEqual([]);
  });

  it('warns before the run when a request exceeds the per-slot context', async () => {
    const { runDir, recordFile } = await makeRun();
    const log = eventLog();
    const server = await newManager().start(
      llamaConfig(recordFile, { model: await ggufFile(runDir), contextSize: 2048, maxSeqs: 4 }),
      { runDir, onEvent: log.onEvent, largestRequest: { inputTokens: 512, outputTokens: 256 } },
    );
    const warnings = log.events.flatMap((e) => (e.type === 'message' && e.severity === 'warn' ? [e.text] : []));
    expect(warnings).toEqual([expect.stringMatching(/per-slot context of 512 .*--ctx-size to at least 3072/)]);
    await server.stop();
  });

  it('says the model file is missing, in one line naming --model', async () => {
    const { runDir, recordFile } = await makeRun();
    const error = await startError(
      newManager().start(llamaConfig(recordFile, { model: join(runDir, 'nope.gguf') }), { runDir }),
    );
    expect(error.failure.kind).toBe('model-not-found');
    expect(error.failure.message).toMatch(/cannot open the model file '.*nope\.gguf'/);
    expect(error.failure.fix).toMatch(/--model/);
    expect(error.message.split('\n')).toHaveLength(1);
    expect(alivePids(launchedPids(recordFile))).toEqual([]);
  });

  it('classifies out of GPU memory with a llama.cpp fix', async () => {
    const { runDir, recordFile } = await makeRun();
    const error = await startError(
      newManager().start(llamaConfig(recordFile, { model: await ggufFile(runDir) }, 'oom'), { runDir }),
    );
    expect(error.failure.kind).toBe('oom');
    expect(error.failure.fix).toMatch(/--gpu-layers/);
    expect(alivePids(launchedPids(recordFile))).toEqual([]);
  });

  it('refuses a taken port before launching', async () => {
    const { runDir, recordFile } = await makeRun();
    const blocker: Server = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as { port: number }).port;
    try {
      const error = await startError(
        newManager().start(llamaConfig(recordFile, { model: await ggufFile(runDir), port }), { runDir }),
      );
      expect(error.failure.kind).toBe('port-in-use');
      expect(readRecord(recordFile).filter((e) => e.kind === 'engine')).toEqual([]);
    } finally {
      blocker.close();
    }
  });

  it('is not ready while /health answers 503: gives up at the start time-out and stops it', async () => {
    const { runDir, recordFile } = await makeRun();
    const log = eventLog();
    const error = await startError(
      newManager().start(llamaConfig(recordFile, { model: await ggufFile(runDir), startTimeoutMs: 1_500 }, 'hang'), {
        runDir,
        onEvent: log.onEvent,
      }),
    );
    expect(error.failure.kind).toBe('timeout');
    expect(log.events.some((e) => e.type === 'server-state' && e.state === 'ready')).toBe(false);
    expect(alivePids(launchedPids(recordFile))).toEqual([]);
  });

  it('resolves died when llama-server crashes mid-run', async () => {
    const { runDir, recordFile } = await makeRun();
    const server = await newManager().start(llamaConfig(recordFile, { model: await ggufFile(runDir) }), { runDir });
    await fetch(`${server.info.baseUrl}/fake/crash`);
    const failure = await server.died;
    await server.stop();
    expect(failure.kind).toBe('crashed');
    expect(failure.message).toMatch(/llama\.cpp exited with code 134 while serving/);
    expect(failure.logTail.some((l) => l.includes('illegal memory access'))).toBe(true);
    expect(alivePids(launchedPids(recordFile))).toEqual([]);
  });

  it('says how to get llama-server when the binary is missing', async () => {
    const { runDir, recordFile } = await makeRun();
    const error = await startError(
      newManager().start(
        llamaConfig(recordFile, { model: await ggufFile(runDir), llamaServer: join(runDir, 'no-such-llama-server') }),
        { runDir },
      ),
    );
    expect(error.failure.kind).toBe('engine-missing');
    expect(error.failure.fix).toMatch(/--llama-server PATH/);
  });

  it('needs a model', async () => {
    const { runDir, recordFile } = await makeRun();
    const error = await newManager()
      .start(llamaConfig(recordFile), { runDir })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServerConfigError);
    expect((error as Error).message).toMatch(/--model \(a \.gguf file/);
  });
});

describe('launching any server command', () => {
  it('fills {port} and {model}, waits on its --health path, scrapes /metrics, and stops leaving nothing', async () => {
    const { runDir, recordFile } = await makeRun();
    const model = await ggufFile(runDir);
    const log = eventLog();
    const server = await newManager().start(
      ServerConfigSchema.parse({
        engine: 'command',
        model,
        command: [process.execPath, FAKE_LLAMA, '-m', '{model}', '--host', '{host}', '--port', '{port}', '--metrics'],
        healthPath: '/v1/health',
        env: { FAKE_ENGINE_RECORD: recordFile },
      }),
      { runDir, onEvent: log.onEvent },
    );
    expect(server.info).toMatchObject({ engine: 'command', model, metricsUrl: `${server.info.baseUrl}/metrics` });
    expect(log.events).toContainEqual(
      expect.objectContaining({
        type: 'server-state',
        state: 'loading',
        detail: `waiting for ${server.info.baseUrl}/v1/health`,
      }),
    );
    const port = server.info.baseUrl.split(':').at(-1) as string;
    expect(readRecord(recordFile).find((e) => e.kind === 'engine')?.argv).toEqual([
      '-m', model, '--host', '127.0.0.1', '--port', port, '--metrics',
    ]); // prettier-ignore
    const pids = launchedPids(recordFile);
    await server.stop();
    expect(alivePids(pids)).toEqual([]);
  });

  it('says when the command cannot be run', async () => {
    const { runDir } = await makeRun();
    const error = await startError(
      newManager().start(
        ServerConfigSchema.parse({ engine: 'command', command: [join(runDir, 'no-server'), '{port}'] }),
        {
          runDir,
        },
      ),
    );
    expect(error.failure.kind).toBe('engine-missing');
    expect(error.failure.fix).toMatch(/--cmd/);
  });
});

describe('a short sweep on llama.cpp through the CLI', () => {
  it('runs, records llama.cpp as the engine, and leaves no process', async () => {
    const { runDir, recordFile } = await makeRun();
    const model = await ggufFile(runDir);
    const out = await mkdtemp(join(tmpdir(), 'sb-llama-'));
    try {
      const res = spawnSync(
        process.execPath,
        [
          CLI, 'run', '--engine', 'llamacpp', '--llama-server', FAKE_LLAMA, '--model', model, '--ctx-size', '4096',
          '--max-seqs', '2', '--concurrency', '1,2', '--input-len', '16', '--output-len', '8', '--rounds', '1', '--requests-per-round', '4',
          '--out', out, '--label', 'llama', '--env', `FAKE_ENGINE_RECORD=${recordFile}`,
        ], // prettier-ignore
        { encoding: 'utf8', timeout: 240_000 },
      );
      expect(res.stderr + res.stdout).not.toMatch(/internal error/i);
      const [dir] = await readdir(out);
      const record = JSON.parse(await readFile(join(out, dir as string, 'run.json'), 'utf8')) as RunRecord;
      expect(failedBeyondMachine(record)).toEqual([]);
      expect(exitAgrees(res.status, record)).toBe(true);
      expect(record.environment.engine).toMatchObject({ kind: 'llamacpp', version: 'b6500 (6c7a4415)' });
      const requests = readFileSync(join(out, dir as string, 'requests.jsonl'), 'utf8')
        .trim()
        .split('\n');
      expect(requests.length).toBeGreaterThan(0);
      expect(alivePids(launchedPids(recordFile))).toEqual([]);
    } finally {
      await rm(out, { recursive: true, force: true });
    }
  });
});
