import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ServerConfigSchema } from '../../../src/shared/config.js';
import { createServerManager, type ServerManager } from '../../../src/core/servers/manager.js';
import { findCliScript } from '../../../src/core/package-root.js';
import { loadPreset } from '../../../src/core/servers/presets.js';
import { isGroupAlive, trackedGroups } from '../../../src/core/servers/process-group.js';
import { ServerConfigError, ServerStartError } from '../../../src/core/servers/server-errors.js';
import type { RunningServer } from '../../../src/core/servers/types.js';
import {
  alivePids,
  eventLog,
  FAKE_PYTHON,
  FAKE_SIM_CLI,
  fakeConfig,
  launchedPids,
  makeRun,
  readRecord,
} from './helpers.js';

let manager: ServerManager;
const managers: ServerManager[] = [];
function newManager(options: Parameters<typeof createServerManager>[0] = {}): ServerManager {
  manager = createServerManager({
    pollMs: 50,
    grace: { interruptMs: 5_000, terminateMs: 5_000, killMs: 5_000 },
    ...options,
  });
  managers.push(manager);
  return manager;
}

afterEach(async () => {
  await Promise.all(managers.splice(0).map((m) => m.stopAll()));
});

async function expectStartError(promise: Promise<RunningServer>): Promise<ServerStartError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ServerStartError);
  return error as ServerStartError;
}

describe('launching vLLM (fake python)', () => {
  it('starts, reports progress and engine facts, logs to server.log, and stops leaving nothing', async () => {
    const { runDir, recordFile } = await makeRun();
    const log = eventLog();
    const server = await newManager().start(fakeConfig('vllm', recordFile, 'ok', { maxModelLen: 4096, seed: 1 }), {
      runDir,
      onEvent: log.onEvent,
    });
    expect(server.info).toMatchObject({
      engine: 'vllm',
      model: 'meta-llama/Llama-3.1-8B-Instruct',
      engineVersion: '0.10.1',
      simulated: false,
      maxConcurrency: 12.5,
      maxConcurrencyTokens: 4096,
      kvCacheTokens: 51200,
      logFile: join(runDir, 'server.log'),
    });
    expect(server.info.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(server.info.metricsUrl).toBe(`${server.info.baseUrl}/metrics`);
    const health = await fetch(`${server.info.baseUrl}/health`);
    expect(health.status).toBe(200);

    const engine = readRecord(recordFile).find((e) => e.kind === 'engine');
    const port = server.info.baseUrl.split(':').at(-1) as string;
    expect(engine?.argv).toEqual([
      '--model',
      'meta-llama/Llama-3.1-8B-Instruct',
      '--host',
      '127.0.0.1',
      '--port',
      port,
      '--max-model-len',
      '4096',
      '--seed',
      '1',
    ]);
    const probe = readRecord(recordFile).find((e) => e.kind === 'probe');
    expect(probe?.argv).toEqual(['-c', 'import vllm, sys; print(vllm.__version__)']);

    const states = log.events.flatMap((e) => (e.type === 'server-state' ? [e.state] : []));
    expect(states).toEqual(['checking', 'launching', 'loading', 'ready']);
    const progressKeys = log.events.flatMap((e) => (e.type === 'server-progress' ? [e.key] : []));
    expect(progressKeys).toEqual(
      expect.arrayContaining(['loading', 'weights', 'kv-cache', 'max-concurrency', 'graphs']),
    );
    expect(log.events.some((e) => e.type === 'server-log' && /Uvicorn running on/.test(e.line))).toBe(true);
    expect(server.logTail(100).some((l) => l.includes('GPU KV cache size: 51,200 tokens'))).toBe(true);

    const pids = launchedPids(recordFile);
    expect(pids).toHaveLength(2); // engine + its worker
    expect(alivePids(pids)).toEqual(pids);
    await server.stop();
    expect(alivePids(pids)).toEqual([]);
    expect(trackedGroups()).not.toContain(server.info.pid);
    expect(log.events.at(-1)).toEqual({ type: 'server-state', state: 'stopped' });
    const serverLog = readFileSync(join(runDir, 'server.log'), 'utf8');
    expect(serverLog).toMatch(/^# servebench: .*vllm\.entrypoints\.openai\.api_server --model/);
    expect(serverLog).toContain('Maximum concurrency for 4096 tokens per request: 12.5x');
    expect(serverLog).toContain('received SIGINT, shutting down');

    await server.stop(); // idempotent
    await Promise.all([server.stop(), server.stop()]);
    expect(log.events.filter((e) => e.type === 'server-state' && e.state === 'stopped')).toHaveLength(1);
  });

  it('keeps secrets out of server.log, events and the recorded command', async () => {
    const { runDir, recordFile } = await makeRun();
    const log = eventLog();
    const token = 'hf_SECRETsecretSECRETsecret42';
    const apiKey = 'sk-local-api-key-0123456789';
    const server = await newManager().start(
      fakeConfig('vllm', recordFile, 'ok', { env: { HF_TOKEN: token }, extraArgs: ['--api-key', apiKey] }),
      { runDir, onEvent: log.onEvent },
    );
    await server.stop();
    // The engine really got them...
    expect(readRecord(recordFile).find((e) => e.kind === 'engine')?.argv).toContain(apiKey);
    // ...and printed them, but nothing servebench wrote shows them.
    const written = [
      readFileSync(join(runDir, 'server.log'), 'utf8'),
      JSON.stringify(log.events),
      JSON.stringify(server.info),
    ];
    for (const text of written) {
      expect(text).not.toContain(token);
      expect(text).not.toContain(apiKey);
    }
    expect(server.info.command).toContain('--api-key ***');
    expect(readFileSync(join(runDir, 'server.log'), 'utf8')).toContain('DEBUG using HF token ***');
  });

  it.each([
    ['oom', 'oom', /out of memory/],
    ['kv', 'kv-cache-too-small', /KV cache/],
    ['gated', 'model-not-found', /HF_TOKEN/],
    ['notfound', 'model-not-found', /--model/],
    ['port', 'port-in-use', /--port/],
    ['cuda', 'cuda-mismatch', /driver/],
    ['exit0', 'unknown', /server\.log/],
  ])('classifies a start-up failure: mode %s -> %s', async (mode, kind, fixOrMessage) => {
    const { runDir, recordFile } = await makeRun();
    const log = eventLog();
    const error = await expectStartError(
      newManager().start(fakeConfig('vllm', recordFile, mode), { runDir, onEvent: log.onEvent }),
    );
    expect(error.failure.kind).toBe(kind);
    expect(`${error.failure.message} ${error.failure.fix}`).toMatch(fixOrMessage);
    expect(error.message.split('\n')).toHaveLength(1);
    expect(error.failure.logTail.length).toBeGreaterThan(0);
    expect(log.events.at(-1)).toMatchObject({ type: 'server-state', state: 'failed' });
    expect(alivePids(launchedPids(recordFile))).toEqual([]);
    expect(existsSync(join(runDir, 'server.log'))).toBe(true);
  });

  it('stops a server that ignores SIGINT and SIGTERM with SIGKILL on the whole group', async () => {
    const { runDir, recordFile } = await makeRun();
    const log = eventLog();
    const server = await newManager({ grace: { interruptMs: 300, terminateMs: 300, killMs: 5_000 } }).start(
      fakeConfig('vllm', recordFile, 'ok', { fakeEnv: { FAKE_ENGINE_IGNORE: 'SIGINT,SIGTERM' } }),
      { runDir, onEvent: log.onEvent },
    );
    const pids = launchedPids(recordFile);
    expect(alivePids(pids)).toHaveLength(2);
    await server.stop();
    expect(alivePids(pids)).toEqual([]);
    expect(isGroupAlive(server.info.pid as number)).toBe(false);
    const warnings = log.events.flatMap((e) => (e.type === 'message' && e.severity === 'warn' ? [e.text] : []));
    expect(warnings).toEqual([expect.stringMatching(/sending SIGTERM/), expect.stringMatching(/sending SIGKILL/)]);
    expect(readFileSync(join(runDir, 'server.log'), 'utf8')).toContain('received SIGINT, ignoring it');
  });

  it('resolves died when the server crashes while in use, with the log tail', async () => {
    const { runDir, recordFile } = await makeRun();
    const log = eventLog();
    const server = await newManager().start(fakeConfig('vllm', recordFile, 'ok'), { runDir, onEvent: log.onEvent });
    const pids = launchedPids(recordFile);
    expect(server.exited).toBe(false);
    expect(server.hasDied()).toBeNull();
    await fetch(`${server.info.baseUrl}/fake/crash`);
    const failure = await server.died;
    expect(server.exited).toBe(true);
    expect(server.hasDied()).toBe(failure);
    await server.stop(); // waits for the reaping the exit started; completes the same failure object
    expect(failure.kind).toBe('crashed');
    expect(failure.message).toMatch(/exited with code 1 while serving/);
    expect(failure.logTail.some((l) => l.includes('illegal memory access'))).toBe(true);
    expect(alivePids(pids)).toEqual([]); // the orphaned worker was stopped too
    expect(log.events.at(-1)).toMatchObject({ type: 'server-state', state: 'failed' });
    const states = log.events.flatMap((e) => (e.type === 'server-state' ? [e.state] : []));
    expect(states).toEqual(['checking', 'launching', 'loading', 'ready', 'failed']); // no stopping/stopped
    expect(manager.running.has(server)).toBe(false);
  });

  it('makes the exit known at once: died and exited before the process group is reaped', async () => {
    const { runDir, recordFile } = await makeRun();
    const log = eventLog();
    // The worker ignores SIGINT, so reaping cannot end before the SIGTERM that follows the interrupt grace.
    const server = await newManager({ grace: { interruptMs: 200, terminateMs: 5_000, killMs: 5_000 } }).start(
      fakeConfig('vllm', recordFile, 'ok', { fakeEnv: { FAKE_ENGINE_IGNORE: 'SIGINT' } }),
      { runDir, onEvent: log.onEvent },
    );
    const worker = readRecord(recordFile).find((e) => e.kind === 'worker')?.pid as number;
    let exitedWhenDiedResolved: boolean | undefined;
    const died = server.died.then((f) => {
      exitedWhenDiedResolved = server.exited;
      return { failure: f, workerAlive: alivePids([worker]).length === 1, running: manager.running.has(server) };
    });
    await fetch(`${server.info.baseUrl}/fake/crash`);
    const atDeath = await died;
    expect(exitedWhenDiedResolved).toBe(true);
    expect(atDeath.workerAlive).toBe(true); // not reaped yet: died did not wait for it
    expect(atDeath.running).toBe(true);
    expect(atDeath.failure.kind).toBe('crashed');
    expect(log.events.some((e) => e.type === 'server-state' && e.state === 'failed')).toBe(false);

    await server.stop();
    expect(alivePids([worker])).toEqual([]);
    expect(server.hasDied()).toBe(atDeath.failure); // same object, completed
    expect(atDeath.failure.logTail.some((l) => l.includes('illegal memory access'))).toBe(true);
    expect(log.events.at(-1)).toMatchObject({ type: 'server-state', state: 'failed' });
  });

  it('does not count a stop() the caller asked for as a death', async () => {
    const { runDir, recordFile } = await makeRun();
    const server = await newManager().start(fakeConfig('vllm', recordFile, 'ok'), { runDir });
    let resolved = false;
    void server.died.then(() => {
      resolved = true;
    });
    await server.stop();
    expect(server.exited).toBe(false);
    expect(server.hasDied()).toBeNull();
    expect(resolved).toBe(false);
  });

  it('cancels start-up through the AbortSignal and kills the process group', async () => {
    const { runDir, recordFile } = await makeRun();
    const log = eventLog();
    const controller = new AbortController();
    void log.waitFor((e) => e.type === 'server-progress' && e.key === 'graphs').then(() => controller.abort());
    const error = await newManager()
      .start(fakeConfig('vllm', recordFile, 'hang'), { runDir, onEvent: log.onEvent, signal: controller.signal })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect((error as Error).name).toBe('AbortError');
    const pids = launchedPids(recordFile);
    expect(pids).toHaveLength(2);
    expect(alivePids(pids)).toEqual([]);
    expect(log.events.at(-1)).toEqual({ type: 'server-state', state: 'stopped' });
  });

  it('gives up after the start time-out with the log tail', async () => {
    const { runDir, recordFile } = await makeRun();
    const log = eventLog();
    const error = await expectStartError(
      newManager().start(fakeConfig('vllm', recordFile, 'hang', { startTimeoutMs: 1_500 }), {
        runDir,
        onEvent: log.onEvent,
      }),
    );
    expect(error.failure.kind).toBe('timeout');
    expect(error.failure.fix).toMatch(/--start-timeout/);
    expect(alivePids(launchedPids(recordFile))).toEqual([]);
  });

  it('refuses a port that is already taken, before launching', async () => {
    const { runDir, recordFile } = await makeRun();
    const blocker: Server = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as { port: number }).port;
    try {
      const error = await expectStartError(
        newManager().start(fakeConfig('vllm', recordFile, 'ok', { port }), { runDir }),
      );
      expect(error.failure.kind).toBe('port-in-use');
      expect(error.message).toMatch(new RegExp(`port ${port}.*--port`));
      expect(readRecord(recordFile).filter((e) => e.kind === 'engine')).toEqual([]);
    } finally {
      blocker.close();
    }
  });

  it('says how to install a missing engine', async () => {
    const { runDir, recordFile } = await makeRun();
    const error = await expectStartError(
      newManager().start(fakeConfig('vllm', recordFile, 'ok', { fakeEnv: { FAKE_PYTHON_MODULES: 'sglang' } }), {
        runDir,
      }),
    );
    expect(error.failure.kind).toBe('engine-missing');
    expect(error.message).toMatch(/vLLM is not installed/);
    expect(error.failure.fix).toMatch(/pip install vllm.*--python PATH/);
    expect(readRecord(recordFile).filter((e) => e.kind === 'engine')).toEqual([]);

    const sg = await expectStartError(
      newManager().start(fakeConfig('sglang', recordFile, 'ok', { fakeEnv: { FAKE_PYTHON_MODULES: 'vllm' } }), {
        runDir,
      }),
    );
    expect(sg.failure.fix).toMatch(/pip install "sglang\[all\]"/);
  });

  it('says when the python interpreter does not exist', async () => {
    const { runDir } = await makeRun();
    const config = ServerConfigSchema.parse({
      engine: 'vllm',
      model: 'm',
      python: join(runDir, 'no-such-venv', 'bin', 'python'),
    });
    const error = await expectStartError(newManager().start(config, { runDir }));
    expect(error.failure.kind).toBe('engine-missing');
    expect(error.message).toMatch(/interpreter '.*no-such-venv.*' was not found/);
    expect(error.failure.fix).toMatch(/--python PATH/);
  });

  it('checks --quantization against the installed engine --help', async () => {
    const { runDir, recordFile } = await makeRun();
    const bad = await newManager()
      .start(fakeConfig('vllm', recordFile, 'ok', { quantization: 'int3' }), { runDir })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(bad).toBeInstanceOf(ServerConfigError);
    expect((bad as Error).message).toMatch(
      /^--quantization 'int3' is not supported by vLLM 0\.10\.1; valid: aqlm, awq_marlin, awq, .*fp8/,
    );
    expect(readRecord(recordFile).filter((e) => e.kind === 'engine')).toEqual([]);

    const server = await newManager().start(fakeConfig('vllm', recordFile, 'ok', { quantization: 'awq' }), { runDir });
    expect(readRecord(recordFile).find((e) => e.kind === 'engine')?.argv).toEqual(
      expect.arrayContaining(['--quantization', 'awq']),
    );
    expect(readRecord(recordFile).find((e) => e.kind === 'help')?.argv).toEqual([
      '-m',
      'vllm.entrypoints.openai.api_server',
      '--help',
    ]);
    await server.stop();
  });

  it('needs a model', async () => {
    const { runDir } = await makeRun();
    const config = ServerConfigSchema.parse({ engine: 'vllm', python: FAKE_PYTHON });
    await expect(newManager().start(config, { runDir })).rejects.toThrow(/vLLM needs a model: pass --model/);
  });
});

describe('launching SGLang (fake python)', () => {
  it('waits for the ready line, not only /health, and sets up block diffusion', async () => {
    const { runDir, recordFile } = await makeRun();
    const log = eventLog();
    const server = await newManager().start(
      fakeConfig('sglang', recordFile, 'ok', {
        model: 'inclusionAI/LLaDA2.0-mini',
        diffusion: { blockSize: 32, threshold: 0.95 },
      }),
      { runDir, onEvent: log.onEvent, maxConcurrency: 64 },
    );
    const readyLineAt = log.events.findIndex(
      (e) => e.type === 'server-log' && e.line.includes('The server is fired up and ready to roll!'),
    );
    const readyAt = log.events.findIndex((e) => e.type === 'server-state' && e.state === 'ready');
    expect(readyLineAt).toBeGreaterThan(-1);
    expect(readyAt).toBeGreaterThan(readyLineAt);

    const argv = readRecord(recordFile).find((e) => e.kind === 'engine')?.argv ?? [];
    const configFile = join(runDir, 'dllm-algorithm-config.yaml');
    expect(argv).toEqual(
      expect.arrayContaining([
        '--model-path',
        'inclusionAI/LLaDA2.0-mini',
        '--enable-metrics',
        '--dllm-algorithm',
        'LowConfidence',
        '--dllm-algorithm-config',
        configFile,
      ]),
    );
    expect(argv[argv.indexOf('--max-running-requests') + 1]).toBe('64');
    expect(readFileSync(configFile, 'utf8')).toBe('block_size: 32\nthreshold: 0.95\n');
    expect(log.events).toContainEqual(
      expect.objectContaining({ type: 'message', text: expect.stringMatching(/max-running-requests 64/) }),
    );
    expect(server.info).toMatchObject({
      engine: 'sglang',
      engineVersion: '0.5.2',
      kvCacheTokens: 409600,
      maxConcurrency: 48,
      maxRunningRequests: 48,
    });
    expect(server.info.maxConcurrencyTokens).toBeUndefined();
    const pids = launchedPids(recordFile);
    await server.stop();
    expect(alivePids(pids)).toEqual([]);
  });

  it('classifies SGLang out-of-memory', async () => {
    const { runDir, recordFile } = await makeRun();
    const error = await expectStartError(newManager().start(fakeConfig('sglang', recordFile, 'oom'), { runDir }));
    expect(error.failure.kind).toBe('oom');
    expect(error.failure.fix).toMatch(/mem-fraction-static/);
  });
});

describe('launching the simulator as a child process', () => {
  it('runs the CLI script with sim --mimic vllm and reports a simulated server', async () => {
    const { runDir, recordFile } = await makeRun();
    const config = ServerConfigSchema.parse({
      engine: 'sim',
      model: 'sim-8b',
      env: { FAKE_ENGINE_MODE: 'ok', FAKE_ENGINE_RECORD: recordFile },
    });
    const server = await newManager({ cliScript: FAKE_SIM_CLI }).start(config, { runDir });
    const port = server.info.baseUrl.split(':').at(-1) as string;
    expect(readRecord(recordFile).find((e) => e.kind === 'sim')?.argv).toEqual([
      '--mimic',
      'vllm',
      '--port',
      port,
      '--host',
      '127.0.0.1',
      '--model',
      'sim-8b',
      '--gpu-state',
      join(runDir, 'gpu-state.json'),
    ]);
    expect(server.info).toMatchObject({
      engine: 'sim',
      simulated: true,
      model: 'sim-8b',
      gpuStateFile: join(runDir, 'gpu-state.json'),
    });
    const pids = launchedPids(recordFile);
    await server.stop();
    expect(alivePids(pids)).toEqual([]);
  });

  // Built or not decides; a time-limited trial run here would skip the test on a slow machine.
  const realSim = findCliScript() !== undefined;
  it.skipIf(!realSim)('runs the real built-in simulator (dist/cli.js) from the sim-demo preset', async () => {
    const { runDir } = await makeRun();
    // The preset's start time-out stands: only the test's own (generous) time limit bounds the wait.
    const config = ServerConfigSchema.parse(loadPreset('sim-demo'));
    const server = await newManager().start(config, { runDir });
    expect(server.info.gpuStateFile).toBe(join(runDir, 'gpu-state.json'));
    expect(server.info.simulated).toBe(true);
    expect(server.info.model.length).toBeGreaterThan(0);
    const pid = server.info.pid as number;
    await server.stop();
    expect(isGroupAlive(pid)).toBe(false);
  });
});
