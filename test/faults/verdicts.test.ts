import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { formatLevelTable, formatProblems } from '../../src/cli/format-table.js';
import { runBenchmark } from '../../src/core/benchmark.js';
import type { RunningServer, ServerFailure, StartServer } from '../../src/core/servers/types.js';
import { BenchConfigSchema } from '../../src/shared/config.js';
import type { RequestRecord } from '../../src/shared/request-record.js';
import type { RunRecord } from '../../src/shared/run-record.js';
import { startQueuedServer } from './queued-server.js';
import type { QueuedServer } from './queued-server.js';
import { runCliAsync } from '../fakes/run-cli.js';

const runCli = (args: string[]) => runCliAsync(['run', ...args]);

async function readRun(out: string): Promise<{ dir: string; record: RunRecord; requests: RequestRecord[] }> {
  const [name] = await readdir(out);
  const dir = join(out, name as string);
  const record = JSON.parse(await readFile(join(dir, 'run.json'), 'utf8')) as RunRecord;
  const requests = (await readFile(join(dir, 'requests.jsonl'), 'utf8'))
    .split('\n')
    .filter((l) => l.length > 0)
    .map((l) => JSON.parse(l) as RequestRecord);
  return { dir, record, requests };
}

/** A StartServer that attaches to a URL and lets the test kill "the server" at a chosen moment. */
function attachTo(url: string): { start: StartServer; die: (f: ServerFailure) => void } {
  let kill: (f: ServerFailure) => void = () => undefined;
  let dead: ServerFailure | null = null;
  const start: StartServer = async () => {
    const died = new Promise<ServerFailure>((resolve) => {
      kill = (f) => {
        dead = f;
        resolve(f);
      };
    });
    const server: RunningServer = {
      info: { engine: 'attach', baseUrl: url, model: 'stand-in', simulated: false },
      died,
      get exited() {
        return dead !== null;
      },
      hasDied: () => dead,
      stop: async () => undefined,
      logTail: () => [],
    };
    return server;
  };
  return { start, die: (f) => kill(f) };
}

let out: string;
let server: QueuedServer | null = null;
beforeEach(async () => {
  out = await mkdtemp(join(tmpdir(), 'sb-faults-'));
});
afterEach(async () => {
  await server?.close();
  server = null;
  await rm(out, { recursive: true, force: true });
});

describe('verdicts against real-server behaviour', () => {
  it('fast server with 4 slots queueing 64 concurrent requests, one write per token: streaming is never called buffered', async () => {
    server = await startQueuedServer({ slots: 4, prefillMs: 20 });
    const res = await runCli([
      '--url',
      server.url,
      '--concurrency',
      '64',
      '--input-len',
      '16',
      '--output-len',
      '128',
      '--rounds',
      '1',
      '--requests-per-round',
      '128',
      '--warmup',
      '4',
      '--out',
      out,
    ]);
    const { record, requests } = await readRun(out);
    expect(record.status, res.stderr).toBe('completed');
    // The server really queued: never more than its 4 slots decoding, 64 requests waiting on them.
    expect(server.peakBusy).toBe(4);
    const level = record.levels[0]!;
    expect(level.completed).toBe(128);
    const streaming = level.checks.find((c) => c.id === 'streaming')!;
    // A quiet machine passes; a starved one may warn about a stall or clumps (the stand-in shares this process), but
    // never calls the stream buffered.
    expect(streaming.status, streaming.detail).not.toBe('fail');
    expect(['streamed', 'stalled', 'clumped', 'itl-coalesced']).toContain(streaming.code);
    expect(res.stdout).not.toMatch(/FAIL streaming/);
    // What the verdict rests on: in most requests no read carried most of the chunks (a busy client merges a few).
    const measured = requests.filter((r) => !r.warmup);
    const merged = measured.filter((r) => {
      const perRead = new Map<number, number>();
      for (const [t] of r.chunks) perRead.set(t, (perRead.get(t) ?? 0) + 1);
      return Math.max(...perRead.values()) * 2 > r.chunks.length;
    });
    // The verdict agrees with the reads: a stream that passed was not mostly merged into single reads.
    if (streaming.status === 'pass') expect(merged.length * 2).toBeLessThan(measured.length);
  });

  it('every warm-up request refused for context size: exit 2 quoting the server and naming the fix, folder kept and failed', async () => {
    server = await startQueuedServer({ slots: 4, prefillMs: 0, contextSize: 96 });
    const res = await runCli([
      '--url',
      server.url,
      '--concurrency',
      '2,4',
      '--input-len',
      '16',
      '--output-len',
      '128',
      '--rounds',
      '2',
      '--warmup',
      '2',
      '--out',
      out,
    ]);
    expect(res.status).toBe(2);
    const last = res.stderr.trim().split('\n').pop()!;
    expect(last).toMatch(/exceeds the available context size \(96 tokens\)/);
    expect(last).toMatch(/lower --input-len\/--output-len/);
    expect(last).toMatch(/--max-model-len/);
    expect(last).toMatch(/llama\.cpp -c/);
    expect(last).not.toMatch(/\n|at .*\.js:/);
    const { record, requests } = await readRun(out);
    expect(record.status).toBe('failed');
    expect(record.error).toMatch(
      /the server rejected all 2 warm-up requests: "HTTP 400: request \(\d+ tokens\) exceeds/,
    );
    // Stopped at once: only the warm-up was sent, and it is on disk.
    expect(requests).toHaveLength(2);
    expect(requests.every((r) => r.warmup && r.httpStatus === 400)).toBe(true);
    expect(record.levels).toEqual([]);
    expect(record.finishedAt).not.toBeNull();
  });

  it('first round refused with HTTP 400, warm-up off: exit 2 at once, the level kept, quoting the server', async () => {
    server = await startQueuedServer({ slots: 4, prefillMs: 0, contextSize: 95 });
    const res = await runCli([
      '--url',
      server.url,
      '--concurrency',
      '2,4',
      '--input-len',
      '16',
      '--output-len',
      '80',
      '--rounds',
      '3',
      '--requests-per-round',
      '4',
      '--no-warmup',
      '--out',
      out,
    ]);
    expect(res.status).toBe(2);
    expect(res.stderr.trim().split('\n').pop()).toMatch(
      /the server rejected all 4 requests of the first round: "HTTP 400: request \(\d+ tokens\) exceeds the available context size \(95 tokens\), try increasing it" — each request needs 16 \+ 80 tokens of context/,
    );
    const { record, requests } = await readRun(out);
    expect(record.status).toBe('failed');
    // Nothing after the first round was sent; what was measured is kept.
    expect(requests).toHaveLength(4);
    expect(record.levels).toHaveLength(1);
    const level = record.levels[0]!;
    expect(level.failed).toBe(4);
    expect(level.topError).toEqual({
      kind: 'http-400',
      message: expect.stringMatching(
        /^HTTP 400: request \(\d+ tokens\) exceeds the available context size \(95 tokens\)/,
      ),
      count: 4,
    });
    const errors = level.checks.find((c) => c.id === 'errors')!;
    expect(errors).toMatchObject({ code: 'too-many-failed', facts: { errorKinds: 'http-400 4', commonestCount: 4 } });
    expect(errors.facts?.commonestMessage).toMatch(/^HTTP 400: request \(\d+ tokens\) exceeds/);
    expect(res.stdout).toMatch(/c=2: 4 failed; server said \(4×\): "HTTP 400: request \(\d+ tokens\) exceeds/);
  });

  it('every 3rd request fails with HTTP 500: the run goes on; errors check, level and CLI last lines quote the server', async () => {
    server = await startQueuedServer({ slots: 4, prefillMs: 0, failEvery: 3 });
    const res = await runCli([
      '--url',
      server.url,
      '--concurrency',
      '2',
      '--input-len',
      '16',
      '--output-len',
      '8',
      '--rounds',
      '1',
      '--requests-per-round',
      '9',
      '--warmup',
      '2',
      '--out',
      out,
    ]);
    expect(res.status).toBe(1);
    const { record } = await readRun(out);
    expect(record.status).toBe('completed');
    const level = record.levels[0]!;
    expect(level.failed).toBe(3);
    expect(level.topError).toEqual({
      kind: 'http-500',
      message: 'HTTP 500: CUDA error: an illegal memory access',
      count: 3,
    });
    const quote = 'the server said (3×): "HTTP 500: CUDA error: an illegal memory access"';
    expect(level.checks.find((c) => c.id === 'errors')).toMatchObject({
      facts: {
        errorKinds: 'http-500 3',
        commonestMessage: 'HTTP 500: CUDA error: an illegal memory access',
        commonestCount: 3,
      },
    });
    const lines = res.stdout.trim().split('\n');
    expect(lines.find((l) => l.startsWith('FAIL errors at c=2'))).toContain(quote);
    expect(lines).toContain('c=2: 3 failed; server said (3×): "HTTP 500: CUDA error: an illegal memory access"');
  });

  it('server crash after 1 of 16 requests: level cut short, no throughput, cost or spread, a check says why', async () => {
    // One slot: 15 requests wait in the queue when the server dies, so they fail with it.
    server = await startQueuedServer({ slots: 1, prefillMs: 20 });
    const attach = attachTo(server.url);
    const result = await runBenchmark(
      BenchConfigSchema.parse({
        out,
        label: 't',
        concurrency: [16],
        inputLen: [16],
        outputLen: [8],
        rounds: 3,
        requestsPerRound: 16,
        warmup: 0,
        gpuPricePerHour: 2,
        server: { engine: 'attach', url: server.url },
      }),
      {
        startServer: attach.start,
        onEvent: (e) => {
          if (e.type === 'request-done' && e.done === 1) {
            attach.die({
              kind: 'crashed',
              message: 'the server exited with code 1',
              fix: 'read server.log',
              logTail: [],
            });
          }
        },
      },
    );
    expect(result.record.status).toBe('failed');
    const level = result.record.levels[0]!;
    expect(level.completed).toBe(1);
    expect(level.failed).toBe(15);
    expect(level.partial).toBe(true);
    expect(level.cutShort).toMatch(/^the server died: the server exited with code 1/);
    expect(level.outputTokPerSec).toBeNull();
    expect(level.totalTokPerSec).toBeNull();
    expect(level.reqPerSec).toBeNull();
    expect(level.roundCv).toBeNull();
    expect(level.costPerMOutputTokUsd).toBeUndefined();
    const cut = level.checks.find((c) => c.id === 'cut-short')!;
    expect(cut).toMatchObject({
      status: 'fail',
      code: 'server-failed',
      facts: { completeRounds: 0, partialRounds: 1, completedInPartial: 1, failedInPartial: 15 },
    });
    expect(cut.facts?.reason).toMatch(/^the server died/);
    // The table shows no rate for it, marked cut short; the last lines say why.
    const row = formatLevelTable(result.record).split('\n')[1]!;
    expect(row).toMatch(/^\s*16\s+\S+ \(p5 \d+\)\s+—\*/);
    // The offered load of a round cut short is shown, but not judged: the cut-short check says what happened.
    expect(level.offered?.inFlightMean).toBeGreaterThan(0);
    expect(level.checks.find((c) => c.id === 'client')?.code).not.toBe('offered-below-asked');
    expect(formatProblems(result.record)).toContain(
      'c=16 cut short: the server died: the server exited with code 1 (no throughput: no round completed)',
    );
    // run.json carries null, not a number.
    const onDisk = JSON.parse(await readFile(join(result.dir, 'run.json'), 'utf8')) as RunRecord;
    expect(onDisk.levels[0]!.outputTokPerSec).toBeNull();
  });
});
