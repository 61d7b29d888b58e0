import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { formatLevelTable } from '../../src/cli/format-table.js';
import { runBenchmark } from '../../src/core/benchmark.js';
import type { RunEvent } from '../../src/shared/events.js';
import type { RunningServer, StartServer } from '../../src/core/servers/types.js';
import { BenchConfigSchema } from '../../src/shared/config.js';
import type { RequestRecord } from '../../src/shared/request-record.js';
import type { Check, LevelResult, RunRecord } from '../../src/shared/run-record.js';
import { startLyingServer, type LyingMode, type LyingServer } from '../fakes/lying-usage-server.js';

/** Attaches to a stand-in's URL as `--url` does. */
function attach(url: string): StartServer {
  return async () => {
    const server: RunningServer = {
      info: { engine: 'attach', baseUrl: url, model: 'liar', simulated: false },
      died: new Promise(() => undefined),
      exited: false,
      hasDied: () => null,
      stop: async () => undefined,
      logTail: () => [],
    };
    return server;
  };
}

let out: string;
let server: LyingServer | null = null;
beforeEach(async () => {
  out = await mkdtemp(join(tmpdir(), 'sb-numbers-'));
});
afterEach(async () => {
  await server?.close();
  server = null;
  await rm(out, { recursive: true, force: true });
});

interface Run {
  record: RunRecord;
  level: LevelResult;
  requests: RequestRecord[];
  messages: string[];
  check: (id: Check['id']) => Check;
}

/** One level (c=2, 8 tokens out, 2 rounds of 4) against the stand-in lying in `mode`. */
async function runAgainst(mode: LyingMode, options: { tokensPerChunk?: number } = {}): Promise<Run> {
  server = await startLyingServer(mode, options);
  const messages: string[] = [];
  const result = await runBenchmark(
    BenchConfigSchema.parse({
      out,
      label: mode,
      concurrency: [2],
      inputLen: [16],
      outputLen: [8],
      rounds: 2,
      requestsPerRound: 4,
      warmup: 1,
      gpuPricePerHour: 2,
      slo: { tpotMs: 100 },
      server: { engine: 'attach', url: server.url },
    }),
    {
      startServer: attach(server.url),
      onEvent: (e: RunEvent) => {
        if (e.type === 'message') messages.push(e.text);
      },
    },
  );
  const lines = (await readFile(join(result.dir, 'requests.jsonl'), 'utf8')).split('\n').filter(Boolean);
  const record = JSON.parse(await readFile(join(result.dir, 'run.json'), 'utf8')) as RunRecord;
  const level = record.levels[0]!;
  return {
    record,
    level,
    requests: lines.map((l) => JSON.parse(l) as RequestRecord).filter((r) => !r.warmup),
    messages,
    check: (id) => level.checks.find((c) => c.id === id)!,
  };
}

/** The level's figures that rest on the output count are all left out (null in run.json, '—' in the table). */
function expectOutputFiguresLeftOut(run: Run): void {
  const { level } = run;
  expect(level.completed).toBe(8);
  expect(level.outputTokPerSec).toBeNull();
  expect(level.totalTokPerSec).toBeNull();
  expect(level.roundCv).toBeNull();
  expect(level.costPerMOutputTokUsd).toBeUndefined();
  expect(level.goodput).toBeUndefined();
  expect(level.tpotMs.n).toBe(0);
  expect(level.itlPerTokenMs.n).toBe(0);
  expect(level.tokensPerChunk.n).toBe(0);
  // What does not rest on it stays: TTFT, E2E, chunk gaps, requests per second.
  expect(level.ttftMs.n).toBe(8);
  expect(level.itlMs.n).toBeGreaterThan(0);
  expect(level.reqPerSec).not.toBeNull();
  const row = formatLevelTable(run.record).split('\n')[1]!;
  expect(row).not.toMatch(/Infinity|NaN|e\+/);
  expect(row).toMatch(/—/);
  expect(run.check('round-spread')).toMatchObject({ status: 'warn', code: 'output-count-impossible' });
}

describe('usage a server cannot have meant', () => {
  it('completion_tokens 2 while 8 one-token chunks streamed: named, TPOT and tok/s left out', async () => {
    const run = await runAgainst('completion-below-chunks');
    expect(run.check('token-agreement')).toMatchObject({
      status: 'fail',
      code: 'impossible-completion-tokens',
      facts: { field: 'completion_tokens', problem: 'below-chunks', value: 2, bound: 8, requests: 8, of: 8 },
    });
    expect(run.check('output-length')).toMatchObject({ status: 'warn', code: 'impossible-completion-tokens' });
    expect(run.requests[0]!.usageProblems).toEqual([
      { field: 'completion_tokens', code: 'below-chunks', value: 2, bound: 8 },
    ]);
    // The record keeps what the client knows: one token per chunk at least, marked estimated.
    expect(run.requests[0]).toMatchObject({ nOut: 8, nOutSource: 'estimated', chunkTokensSource: 'estimated' });
    expectOutputFiguresLeftOut(run);
  });

  it('completion_tokens 1,000,000 for max_tokens 8: named, no tok/s', async () => {
    const run = await runAgainst('completion-huge');
    expect(run.check('token-agreement')).toMatchObject({
      status: 'fail',
      code: 'impossible-completion-tokens',
      facts: { problem: 'above-max-tokens', value: 1_000_000, bound: 8 },
    });
    expectOutputFiguresLeftOut(run);
  });

  it('completion_tokens 1e308 and 1e400 (Infinity): no count, never printed', async () => {
    for (const mode of ['completion-1e308', 'completion-infinite'] as const) {
      const run = await runAgainst(mode);
      expect(run.check('token-agreement')).toMatchObject({
        status: 'fail',
        code: 'impossible-completion-tokens',
        facts: { problem: 'not-a-count', value: mode === 'completion-1e308' ? 1e308 : null },
      });
      expectOutputFiguresLeftOut(run);
      await server?.close();
      server = null;
    }
  });

  it('completion_tokens -5: the level is kept (no internal error), the count named', async () => {
    const run = await runAgainst('completion-negative');
    expect(run.record.status).toBe('completed');
    expect(run.check('token-agreement')).toMatchObject({
      status: 'fail',
      facts: { problem: 'not-a-count', value: -5 },
    });
    expectOutputFiguresLeftOut(run);
  });

  it('counts sent as strings ("8", "NaN"): named as no number, not taken for absent usage; figures left out', async () => {
    const run = await runAgainst('counts-as-strings');
    expect(run.record.status).toBe('completed');
    expect(run.check('token-agreement')).toMatchObject({
      status: 'fail',
      facts: { problem: 'not-a-number', value: null },
    });
    expect(run.check('token-agreement')?.detail).toMatch(/e\.g\. a string, where a token count belongs/);
    expect(run.check('input-length')?.facts).toMatchObject({ problem: 'not-a-number' });
    expect(run.requests.every((r) => r.usageProblems?.some((p) => p.field === 'cached_tokens'))).toBe(true);
    expectOutputFiguresLeftOut(run);
  });

  it('continuous usage that stands still at 2 while text keeps coming: every chunk kept, the count named', async () => {
    const run = await runAgainst('usage-stuck');
    // The chunks are not merged into one "block": the stream is not passed off as a diffusion model's.
    expect(run.requests.every((r) => r.chunks.length === 8)).toBe(true);
    expect(run.check('token-agreement')).toMatchObject({
      code: 'impossible-completion-tokens',
      facts: { problem: 'below-chunks', value: 2, bound: 8 },
    });
    expect(run.check('streaming').code).not.toBe('single-chunk');
    expectOutputFiguresLeftOut(run);
  });

  it('prompt_tokens 10^12 for a request of a few hundred bytes: named, total tok/s left out, output tok/s kept', async () => {
    const run = await runAgainst('prompt-huge');
    expect(run.check('input-length')).toMatchObject({
      status: 'fail',
      code: 'impossible-prompt-tokens',
      facts: { field: 'prompt_tokens', problem: 'above-request-size', value: 1e12 },
    });
    expect(run.level.totalTokPerSec).toBeNull();
    expect(run.level.outputTokPerSec).not.toBeNull();
    expect(run.requests.every((r) => r.nIn === null)).toBe(true);
  });

  it('cached_tokens 100x the prompt: named, no hit rate', async () => {
    const run = await runAgainst('cached-above-prompt');
    expect(run.check('prefix-cache')).toMatchObject({
      status: 'warn',
      code: 'impossible-cached-tokens',
      facts: { field: 'cached_tokens', problem: 'above-prompt-tokens', requests: 8 },
    });
    expect(run.level.responseCache).toBeUndefined();
    expect(run.requests.every((r) => r.cachedPromptTokens === undefined)).toBe(true);
  });

  it.each(['choices-null', 'content-number', 'content-object'] as const)(
    'chunks whose %s: every request named malformed, nothing explained as diffusion, no tok/s from usage',
    async (mode) => {
      const run = await runAgainst(mode);
      expect(run.level.completed).toBe(0);
      expect(run.level.errorsByReason).toEqual({ 'malformed-chunk': 8 });
      expect(run.level.topError?.message).toMatch(
        mode === 'choices-null' ? /its choices is null/ : /its delta\.content is an? (number|object)/,
      );
      expect(run.level.checks.map((c) => c.code)).not.toContain('single-chunk');
      expect(run.level.outputTokPerSec ?? 0).toBe(0);
    },
  );

  it.each(['delta-null', 'delta-empty'] as const)(
    'chunks whose %s (no text at all) while usage counts 8: failed as no-text, not explained as one chunk, no tok/s',
    async (mode) => {
      const run = await runAgainst(mode);
      expect(run.level.completed).toBe(0);
      expect(run.level.errorsByReason).toEqual({ 'no-text': 8 });
      expect(run.level.topError?.message).toMatch(/carried no text, yet the server counts 8 output tokens/);
      expect(run.level.checks.map((c) => c.code)).not.toContain('single-chunk');
      expect(run.level.outputTokPerSec ?? 0).toBe(0);
    },
  );

  it('legitimate shapes stay figures: 4 tokens a chunk (speculative decoding, blocks) and no usage at all', async () => {
    const blocks = await runAgainst('honest', { tokensPerChunk: 4 });
    expect(blocks.requests.every((r) => r.usageProblems === undefined && r.nOutSource === 'server')).toBe(true);
    expect(blocks.level.outputTokPerSec).toBeGreaterThan(0);
    expect(blocks.level.tpotMs.n).toBe(8);
    expect(blocks.check('token-agreement').code).not.toBe('impossible-completion-tokens');
    await server?.close();
    server = null;
    const none = await runAgainst('no-usage');
    expect(none.requests.every((r) => r.usageProblems === undefined && r.nOutSource === 'estimated')).toBe(true);
    expect(none.level.outputTokPerSec).toBeGreaterThan(0);
    expect(none.level.outputTokensSource).toBe('estimated');
  });
});

describe('/tokenize counts a server cannot have meant', () => {
  it.each(['tokenize-negative', 'tokenize-huge'] as const)(
    '%s: no crash, calibrated from usage instead, the answer named',
    async (mode) => {
      const run = await runAgainst(mode);
      expect(run.record.status).toBe('completed');
      expect(run.level.completed).toBe(8);
      expect(run.messages.join('\n')).toMatch(
        /\/tokenize answered count (-1000000000|1000000000000000) for a \d+-byte request, not a token count/,
      );
      expect(run.messages.join('\n')).toMatch(/not a token count/);
    },
  );
});
