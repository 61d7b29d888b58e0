import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runBenchmark } from '../../src/core/benchmark.js';
import { MIN_WARMUP_REQUESTS } from '../../src/core/load/level-plan.js';
import type { RunningServer, ServerFailure, StartServer } from '../../src/core/servers/types.js';
import { BenchConfigSchema } from '../../src/shared/config.js';
import type { BenchConfigInput } from '../../src/shared/config.js';
import type { RunEvent } from '../../src/shared/events.js';
import type { RequestRecord } from '../../src/shared/request-record.js';
import type { RunRecord } from '../../src/shared/run-record.js';
import { startFakeOpenAi } from '../fakes/fake-openai-server.js';
import type { FakeOpenAiOptions, FakeOpenAiServer } from '../fakes/fake-openai-server.js';

let out: string;
let fake: FakeOpenAiServer | null = null;
beforeEach(async () => {
  out = await mkdtemp(join(tmpdir(), 'sb-bench-'));
});
afterEach(async () => {
  await fake?.close();
  fake = null;
  await rm(out, { recursive: true, force: true });
});

/** A StartServer that "attaches" to the fake and lets a test kill it mid-run. */
function attachTo(
  url: string,
  model = 'fake-model',
): { start: StartServer; die: (f: ServerFailure) => void; stopped: () => number } {
  let kill: (f: ServerFailure) => void = () => undefined;
  let stops = 0;
  let dead: ServerFailure | null = null;
  const start: StartServer = async () => {
    const died = new Promise<ServerFailure>((resolve) => {
      kill = (f) => {
        dead = f;
        resolve(f);
      };
    });
    const server: RunningServer = {
      info: { engine: 'attach', baseUrl: url, model, simulated: false },
      died,
      get exited() {
        return dead !== null;
      },
      hasDied: () => dead,
      stop: async () => {
        stops++;
      },
      logTail: () => [],
    };
    return server;
  };
  return { start, die: (f) => kill(f), stopped: () => stops };
}

async function run(
  fakeOptions: FakeOpenAiOptions,
  config: BenchConfigInput,
  hook?: (e: RunEvent, die: (f: ServerFailure) => void) => void,
) {
  fake = await startFakeOpenAi(fakeOptions);
  const server = attachTo(fake.url);
  const events: RunEvent[] = [];
  const result = await runBenchmark(
    BenchConfigSchema.parse({ out, label: 't', ...config, server: { engine: 'attach', url: fake.url } }),
    {
      startServer: server.start,
      onEvent: (e) => {
        events.push(e);
        hook?.(e, server.die);
      },
    },
  );
  const requests = (await readFile(join(result.dir, 'requests.jsonl'), 'utf8').catch(() => ''))
    .trim()
    .split('\n')
    .filter((l) => l.length > 0)
    .map((l) => JSON.parse(l) as RequestRecord);
  return { ...result, events, requests, stops: server.stopped() };
}

describe('runBenchmark', () => {
  it('runs warm-up and rounds per level, calibrates exact prompts and writes the run folder', async () => {
    const r = await run(
      { tokenize: true },
      { concurrency: [1, 3], inputLen: [40], outputLen: [6], rounds: 2, requestsPerRound: 6 },
    );
    expect(r.record.status).toBe('completed');
    expect(r.record.levels.map((l) => l.concurrency)).toEqual([1, 3]);
    const [l1, l3] = r.record.levels;
    // the default warm-up: at least MIN_WARMUP_REQUESTS, so that the client warms as well as the server
    expect(l1?.warmupRequests).toBe(MIN_WARMUP_REQUESTS);
    expect(l3?.warmupRequests).toBe(MIN_WARMUP_REQUESTS);
    expect(l3?.rounds).toHaveLength(2);
    expect(l3?.completed).toBe(12);
    // every measured prompt has exactly the requested number of tokens, by the server's count
    const measured = r.requests.filter((q) => !q.warmup);
    expect(measured).toHaveLength(24);
    expect(measured.every((q) => q.nIn === 40 && q.nOut === 6)).toBe(true);
    expect(r.record.checks.find((c) => c.id === 'input-length')?.status).toBe('pass');
    expect(r.record.checks.find((c) => c.id === 'output-length')?.status).toBe('pass');
    // prompts are unique across the whole run (no request rides on another's prefix cache)
    const prompts = fake!.requests.map((b) => JSON.stringify(b.messages));
    const runPrompts = prompts.slice(-30);
    expect(new Set(runPrompts).size).toBe(runPrompts.length);
    const csv = await readFile(join(r.dir, 'summary.csv'), 'utf8');
    expect(csv.split('\n')[0]).toContain('output_tok_s');
    expect(csv.trim().split('\n')).toHaveLength(3);
    expect(r.stops).toBe(1);
  });

  it('falls back to usage.prompt_tokens when the server has no /tokenize', async () => {
    const r = await run(
      { tokenize: false },
      { concurrency: [2], inputLen: [30], outputLen: [4], rounds: 1, requestsPerRound: 4 },
    );
    expect(r.requests.filter((q) => !q.warmup).every((q) => q.nIn === 30)).toBe(true);
    expect(r.events.some((e) => e.type === 'message' && /no \/tokenize/.test(e.text))).toBe(true);
  });

  it('uses a strict OpenAI clone without vLLM extras and says so', async () => {
    const r = await run(
      { strict: true, tokenize: true, usage: 'final' },
      { concurrency: [1], inputLen: [20], outputLen: [4], rounds: 1, requestsPerRound: 2, warmup: 0 },
    );
    expect(r.record.status).toBe('completed');
    expect(r.events.some((e) => e.type === 'message' && /ignore_eos|continuous/.test(e.text))).toBe(true);
    expect(r.record.checks.find((c) => c.id === 'warmup')?.status).toBe('warn');
    // The note is kept in run.json, not only shown while the run goes.
    const onDisk = JSON.parse(await readFile(join(r.dir, 'run.json'), 'utf8')) as RunRecord;
    expect(onDisk.messages?.some((m) => m.severity === 'warn' && /ignore_eos|continuous/.test(m.text))).toBe(true);
  });

  it('counts server errors as failed requests with their reason', async () => {
    const r = await run(
      { failEvery: 4, tokenize: true },
      { concurrency: [2], inputLen: [20], outputLen: [4], rounds: 1, requestsPerRound: 12, warmup: 0 },
    );
    const level = r.record.levels[0];
    expect(level?.failed).toBe(3);
    expect(level?.completed).toBe(9);
    expect(level?.errorsByReason).toEqual({ 'http-500': 3 });
    expect(r.requests.filter((q) => !q.ok).every((q) => /HTTP 500: injected failure/.test(q.error ?? ''))).toBe(true);
    expect(level?.checks.find((c) => c.id === 'errors')?.status).toBe('fail');
  });

  it('fails the run with one reason when the server refuses every request', async () => {
    const r = await run(
      { status: 500, tokenize: true },
      { concurrency: [2], inputLen: [20], outputLen: [4], rounds: 1, requestsPerRound: 4, warmup: 0 },
    );
    expect(r.record.status).toBe('failed');
    expect(r.failure).toMatch(/HTTP 500/);
    expect(r.exitCode).toBe(2);
  });

  it('saves what was measured and ends failed when the server dies mid-run', async () => {
    let seen = 0;
    const r = await run(
      { tokenize: true },
      { concurrency: [1, 2], inputLen: [20], outputLen: [4], rounds: 2, requestsPerRound: 4, warmup: 0 },
      (e, die) => {
        if (e.type === 'level-finished') seen++;
        if (e.type === 'request-done' && seen === 1 && e.done === 2) {
          die({ kind: 'crashed', message: 'the server exited with code 1', fix: 'read server.log', logTail: ['boom'] });
        }
      },
    );
    expect(r.record.status).toBe('failed');
    expect(r.failure).toMatch(/server died/);
    expect(r.record.levels).toHaveLength(2);
    expect(r.record.levels[0]?.partial).toBeUndefined();
    expect(r.record.levels[1]?.partial).toBe(true);
    expect(r.record.checks.find((c) => c.id === 'server')?.status).toBe('fail');
    expect(r.requests.length).toBeGreaterThanOrEqual(10);
  });

  it('cancels at once and keeps the levels measured so far', async () => {
    fake = await startFakeOpenAi({ tokenize: true });
    const server = attachTo(fake.url);
    const controller = new AbortController();
    const result = await runBenchmark(
      BenchConfigSchema.parse({
        out,
        concurrency: [1, 2, 4],
        inputLen: [20],
        outputLen: [4],
        rounds: 1,
        requestsPerRound: 8,
        warmup: 0,
        server: { engine: 'attach', url: fake.url },
      }),
      {
        startServer: server.start,
        signal: controller.signal,
        onEvent: (e) => {
          if (e.type === 'level-finished' && e.levelIndex === 0) controller.abort();
        },
      },
    );
    expect(result.record.status).toBe('cancelled');
    expect(result.record.levels).toHaveLength(1);
    expect(server.stopped()).toBe(1);
  });

  it('runs open-loop levels at a request rate and records the schedule lag', async () => {
    const r = await run(
      { tokenize: true },
      { rate: [50], maxConcurrency: 4, inputLen: [20], outputLen: [4], rounds: 1, requestsPerRound: 10, warmup: 1 },
    );
    const level = r.record.levels[0];
    expect(level?.rate).toBe(50);
    expect(level?.completed).toBe(10);
    expect(
      r.requests
        .filter((q) => !q.warmup)
        .every((q) => typeof q.scheduledMs === 'number' && q.sendMs >= (q.scheduledMs as number)),
    ).toBe(true);
    expect(level?.scheduleLagMs?.n).toBe(10);
  });
});

describe('runBenchmark: failures a user can cause, and cancels', () => {
  it('refuses a level that could never reach its concurrency, before any run folder exists', async () => {
    const config = BenchConfigSchema.parse({ out, concurrency: [8], requestsPerRound: 4 });
    await expect(runBenchmark(config, { startServer: attachTo('http://127.0.0.1:9').start })).rejects.toThrow(
      /--requests-per-round 4 is below --concurrency 8/,
    );
    const { readdir } = await import('node:fs/promises');
    expect(await readdir(out)).toEqual([]);
  });

  it('refuses an invalid server variant before any run folder exists', async () => {
    const config = BenchConfigSchema.parse({ out, serverVariants: [{ diffusion: { threshold: 7 } }] });
    await expect(runBenchmark(config, { startServer: attachTo('http://127.0.0.1:9').start })).rejects.toThrow(
      /threshold/,
    );
    const { readdir } = await import('node:fs/promises');
    expect(await readdir(out)).toEqual([]);
  });

  it('a cancel while the server is starting ends the run cancelled, not failed', async () => {
    const controller = new AbortController();
    const start: StartServer = (_config, options) =>
      new Promise((_resolve, reject) => {
        options.signal?.addEventListener('abort', () =>
          reject(new DOMException('This operation was aborted', 'AbortError')),
        );
        controller.abort();
      });
    const result = await runBenchmark(BenchConfigSchema.parse({ out, concurrency: [1] }), {
      startServer: start,
      signal: controller.signal,
    });
    expect(result.record.status).toBe('cancelled');
    expect(result.failure).toBeUndefined();
  });

  it('labels requests cut off by a dying server server-died, and requests cut off by a cancel cancelled', async () => {
    const r = await run(
      { tokenize: true },
      { concurrency: [2], inputLen: [20], outputLen: [4], rounds: 3, requestsPerRound: 40, warmup: 0 },
      (e, die) => {
        if (e.type === 'request-done' && e.done === 5) {
          die({ kind: 'crashed', message: 'exit 1', fix: 'read server.log', logTail: [] });
        }
      },
    );
    expect(r.record.status).toBe('failed');
    const kinds = new Set(r.requests.filter((q) => !q.ok).map((q) => q.errorKind));
    expect([...kinds].every((k) => k === 'server-died')).toBe(true);
  });
});
