import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runBenchmark } from '../../../src/core/benchmark.js';
import { attachTo } from '../../fakes/attached-server.js';
import { createTelemetryRecorder } from '../../../src/core/telemetry/recorder.js';
import { BenchConfigSchema, type BenchConfigInput } from '../../../src/shared/config.js';
import type { RequestRecord } from '../../../src/shared/request-record.js';
import { startFakeOpenAi } from '../../fakes/fake-openai-server.js';
import { closeAll, startSim, testProfile } from '../sim/helpers.js';

afterAll(closeAll);

let out: string;
beforeEach(async () => {
  out = await mkdtemp(join(tmpdir(), 'sb-workloads-'));
});
afterEach(async () => {
  await rm(out, { recursive: true, force: true });
});

/** Attaches the run to a simulator already listening, with its /metrics for the engine telemetry. */
const attach = (url: string) => attachTo(url, { metricsUrl: `${url}/metrics` });

/** The sim's prefix-cache counters (vLLM names), read straight from its /metrics. */
async function cacheCounters(url: string): Promise<{ hits: number; queries: number }> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const read = (name: string): number => Number(new RegExp(`^${name}\\{[^}]*\\} (\\S+)$`, 'm').exec(text)?.[1]);
  return { hits: read('vllm:prefix_cache_hits_total'), queries: read('vllm:prefix_cache_queries_total') };
}

/** One small run against a fresh simulator; the prompts it sent come back from requests.jsonl and the sim. */
async function run(config: BenchConfigInput, profile: Record<string, unknown> = {}) {
  const sim = await startSim({ profile: testProfile({ 'max-model-len': 4096, ...profile }), model: 'sim-model' });
  const before = await cacheCounters(sim.url);
  const result = await runBenchmark(
    BenchConfigSchema.parse({
      out,
      label: 'w',
      rounds: 1,
      requestsPerRound: 8,
      warmup: 2,
      concurrency: [2],
      outputLen: [4],
      ...config,
      server: { engine: 'attach', url: sim.url },
    }),
    {
      startServer: attach(sim.url),
      createTelemetry: (o) =>
        createTelemetryRecorder({ clock: o.clock, metricsUrl: o.metricsUrl, engine: o.engine, engineIntervalMs: 10 }),
    },
  );
  const after = await cacheCounters(sim.url);
  const requests = (await readFile(join(result.dir, 'requests.jsonl'), 'utf8').catch(() => ''))
    .trim()
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as RequestRecord);
  return { ...result, requests, cache: { hits: after.hits - before.hits, queries: after.queries - before.queries } };
}

const check = (r: Awaited<ReturnType<typeof run>>, id: string) =>
  r.record.levels[0]?.checks.find((c) => c.id === id)?.status;

describe('prompt files against the simulator', () => {
  it('pads and cuts JSONL prompts to --input-len by the server count, output fixed', async () => {
    const file = join(out, 'p.jsonl');
    const long = Array.from({ length: 300 }, (_, i) => `word${i}`).join(' ');
    await writeFile(
      file,
      [{ prompt: 'Tell me a story.' }, { prompt: long }, { prompt: 'Hi' }].map((l) => JSON.stringify(l)).join('\n'),
    );
    const r = await run({ prompts: file, inputLen: [64] });
    expect(r.failure).toBeUndefined();
    const measured = r.requests.filter((q) => !q.warmup);
    expect(measured).toHaveLength(8);
    expect(measured.every((q) => q.nIn === 64 && q.expectedIn === 64 && q.nOut === 4)).toBe(true);
    // Prompts are taken in file order from the run's first prompt on, wrapping round.
    expect(r.requests.map((q) => q.workload?.sourceIndex)).toEqual([0, 1, 2, 0, 1, 2, 0, 1, 2, 0]);
    expect(check(r, 'input-length')).toBe('pass');
    expect(check(r, 'output-length')).toBe('pass');
    // Three records for ten requests: 7 of the 8 measured ones resend a record, which the prefix cache may serve.
    const cache = r.record.levels[0]!.checks.find((c) => c.id === 'prefix-cache')!;
    expect(cache).toMatchObject({ status: 'warn', code: 'file-records-resent', facts: { repeatedRecords: 7 } });
  });

  it('keeps message lists and file lengths as they are, each request checked against its own', async () => {
    const file = join(out, 'm.jsonl');
    const lines = [
      {
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'Name three rivers.' },
        ],
        output_len: 3,
      },
      { messages: [{ role: 'user', content: 'What is the capital of France, and why is it there?' }], output_len: 7 },
    ];
    await writeFile(file, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
    const r = await run({ prompts: file, promptLengths: 'file', outputLengths: 'file' });
    expect(r.failure).toBeUndefined();
    const measured = r.requests.filter((q) => !q.warmup);
    expect(measured.every((q) => q.ok && q.nIn === q.expectedIn)).toBe(true);
    expect(new Set(measured.map((q) => q.expectedIn)).size).toBe(2);
    expect(measured.map((q) => q.nOut)).toEqual(measured.map((q) => (q.workload?.sourceIndex === 0 ? 3 : 7)));
    // The level is named by the mean of its requests' own lengths, not by --input-len/--output-len.
    const mean = (pick: (q: RequestRecord) => number): number =>
      Math.round(measured.reduce((s, q) => s + pick(q), 0) / measured.length);
    expect(r.record.levels[0]).toMatchObject({ inputLen: mean((q) => q.expectedIn), outputLen: 5 });
    expect(check(r, 'input-length')).toBe('pass');
    expect(check(r, 'output-length')).toBe('pass');
  });

  it('with file lengths holds each record to the context, not --input-len (which those prompts do not use)', async () => {
    const file = join(out, 'fl.jsonl');
    await writeFile(file, JSON.stringify({ prompt: 'What is the capital of France?', output_len: 3 }) + '\n');
    // --input-len 5000 with --output-len 8 is past the 4096 context, but no prompt of this run has that length.
    const r = await run({
      prompts: file,
      promptLengths: 'file',
      outputLengths: 'file',
      inputLen: [5000],
      outputLen: [8],
    });
    expect(r.failure).toBeUndefined();
    expect(r.requests.every((q) => q.ok)).toBe(true);
    const long = join(out, 'fl-long.jsonl');
    const words = Array.from({ length: 5000 }, (_, i) => `w${i}`).join(' ');
    await writeFile(long, JSON.stringify({ prompt: words, output_len: 3 }) + '\n');
    const refused = await run({ prompts: long, promptLengths: 'file', outputLengths: 'file' });
    expect(refused.failure).toMatch(
      /record 1 has \d+ prompt \+ 3 output tokens, more than the server's context of 4096/,
    );
  });

  it('fits a message list to --input-len through its last user message, the others kept', async () => {
    const file = join(out, 'mf.jsonl');
    const lines = [
      {
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'Name a river.' },
          { role: 'assistant', content: 'The Nile.' },
          { role: 'user', content: Array.from({ length: 120 }, (_, i) => `more${i}`).join(' ') },
        ],
      },
      { messages: [{ role: 'user', content: 'Short.' }] },
    ];
    await writeFile(file, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
    const r = await run({ prompts: file, inputLen: [72] });
    expect(r.failure).toBeUndefined();
    expect(r.requests.every((q) => q.ok && q.nIn === 72 && q.expectedIn === 72)).toBe(true);
    expect(check(r, 'input-length')).toBe('pass');
  });

  it("reads ShareGPT's JSON array: the first human turn, the reply's length as output (file lengths)", async () => {
    const file = join(out, 'sharegpt.json');
    const convo = (ask: string, reply: string) => ({
      id: ask.slice(0, 4),
      conversations: [
        { from: 'human', value: ask },
        { from: 'gpt', value: reply },
      ],
    });
    await writeFile(
      file,
      JSON.stringify([
        convo('How do tides work?', 'The moon pulls the sea toward it as the earth turns.'),
        { id: 'x', conversations: [{ from: 'gpt', value: 'no human turn: skipped' }] },
        convo('Write a haiku about rain.', 'Soft rain on the roof, a quiet drum.'),
      ]),
    );
    const r = await run({ prompts: file, inputLen: [48], outputLengths: 'file' });
    expect(r.failure).toBeUndefined();
    const measured = r.requests.filter((q) => !q.warmup);
    expect(measured.every((q) => q.ok && q.nIn === 48)).toBe(true);
    expect(new Set(r.requests.map((q) => q.workload?.sourceIndex))).toEqual(new Set([0, 2]));
    // Output lengths from the replies: different per conversation, each produced exactly.
    expect(new Set(measured.map((q) => q.expectedOut)).size).toBe(2);
    expect(measured.every((q) => q.nOut === q.expectedOut)).toBe(true);
  });
});

describe('shared prefix against the simulator', () => {
  it('groups requests on shared system prompts: the sim reports cache hits, each request keeps a unique rest', async () => {
    // Slow enough steps that the engine scraper (every 10 ms) sees the level's counters move.
    const r = await run(
      { prefixGroups: 2, prefixLen: 96, inputLen: [160], requestsPerRound: 8, warmup: 2 },
      { 'step-base-ms': 20 },
    );
    expect(r.failure).toBeUndefined();
    const measured = r.requests.filter((q) => !q.warmup);
    expect(measured.every((q) => q.ok && q.nIn === 160)).toBe(true);
    expect(r.requests.map((q) => q.workload?.group)).toEqual([0, 1, 0, 1, 0, 1, 0, 1, 0, 1]);
    // 10 requests in 2 groups: 8 of them find their group's ~96-token system prompt cached (6 blocks of 16).
    expect(r.cache.hits).toBeGreaterThanOrEqual(8 * 80);
    // ... and nothing more: the rest of each prompt is its own.
    expect(r.cache.hits).toBeLessThanOrEqual(8 * 112);
    const level = r.record.levels[0]!;
    expect(level.telemetry?.prefixCacheHits).toBeGreaterThan(0);
    expect(level.telemetry?.prefixCacheHitRate).toBeGreaterThan(0);
    expect(level.telemetry?.prefixCacheHitRate).toBeLessThan(1);
    expect(check(r, 'prefix-cache')).toBe('pass');
    expect(check(r, 'input-length')).toBe('pass');
  });
});

describe('trace replay against the simulator', () => {
  it('replays the trace each round on its schedule and order, with its lengths, and records the lag', async () => {
    const file = join(out, 'trace.jsonl');
    const lines = [
      { timestamp: 0, input_length: 600, output_length: 3, hash_ids: [1, 2] },
      { timestamp: 40, input_length: 700, output_length: 5, hash_ids: [1, 3] },
      { timestamp: 20, input_length: 100, output_length: 2, hash_ids: [9] },
      { timestamp: 90, input_length: 1100, output_length: 4, hash_ids: [1, 2, 4] },
      { timestamp: 120, input_length: 80, output_length: 6, hash_ids: [7] },
    ];
    await writeFile(file, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
    const r = await run({ trace: file, warmup: 0, rounds: 2, requestsPerRound: undefined, concurrency: undefined });
    expect(r.failure).toBeUndefined();
    const level = r.record.levels[0]!;
    expect(level.rate).toBeGreaterThan(0);
    expect(level.rounds).toHaveLength(2);
    for (const round of [0, 1]) {
      // Arrival order: by timestamp (the file's third line is the second arrival).
      const sent = r.requests.filter((q) => q.round === round).sort((a, b) => a.sendMs - b.sendMs);
      expect(sent.map((q) => q.workload?.sourceIndex)).toEqual([0, 2, 1, 3, 4]);
      expect(sent.map((q) => q.expectedIn)).toEqual([600, 100, 700, 1100, 80]);
      // Scheduled at the trace's own gaps; the lag between schedule and send is recorded.
      const first = sent[0]!.scheduledMs!;
      expect(sent.map((q) => Math.round((q.scheduledMs! - first) * 1000) / 1000)).toEqual([0, 20, 40, 90, 120]);
      expect(sent.every((q) => q.sendMs >= q.scheduledMs!)).toBe(true);
    }
    expect(r.requests.every((q) => q.ok && q.nIn === q.expectedIn && q.nOut === q.expectedOut)).toBe(true);
    expect(level.scheduleLagMs?.n).toBe(10);
    // In each replay the third arrival (hash ids 1,3) shares block 1 (512 tokens) with the first (1,2), and the
    // fourth (1,2,4) all of the first's 600 tokens: about 1,100 cached tokens a replay. A replay never rides on the one
    // before (its blocks are its own), so two replays see twice that, not more.
    expect(r.cache.hits).toBeGreaterThanOrEqual(2 * 1000);
    expect(r.cache.hits).toBeLessThanOrEqual(2 * 1200);
    expect(check(r, 'input-length')).toBe('pass');
    expect(check(r, 'output-length')).toBe('pass');
    expect(check(r, 'prefix-cache')).toBe('pass');
  });
});

describe('workload refusals at run time', () => {
  it('refuses a message list that cannot be cut to --input-len, naming the record and the fix', async () => {
    const file = join(out, 'long-system.jsonl');
    const system = Array.from({ length: 200 }, (_, i) => `rule${i}`).join(' ');
    await writeFile(
      file,
      JSON.stringify({
        messages: [
          { role: 'system', content: system },
          { role: 'user', content: 'hi' },
        ],
      }) + '\n',
    );
    const r = await run({ prompts: file, inputLen: [32] });
    expect(r.record.status).toBe('failed');
    expect(r.failure).toMatch(/record 1 cannot be cut to --input-len 32: its other messages alone have \d+ tokens/);
    expect(r.exitCode).toBe(2);
  });

  it('refuses a workload on a server that cannot count tokens, before any request: calibrating would fill its cache', async () => {
    const fake = await startFakeOpenAi({ tokenize: false });
    try {
      const result = await runBenchmark(
        BenchConfigSchema.parse({
          out,
          label: 'nt',
          prefixGroups: 2,
          prefixLen: 16,
          inputLen: [64],
          concurrency: [2],
          requestsPerRound: 8,
          warmup: 2,
          rounds: 1,
          server: { engine: 'attach', url: fake.url },
        }),
        { startServer: attach(fake.url) },
      );
      expect(result.failure).toMatch(/--prefix-groups needs the server's \/tokenize to count each prompt/);
      expect(result.exitCode).toBe(2);
      // No prompt of the workload reached the server.
      expect(fake.requests.filter((b) => JSON.stringify(b).includes('You are assistant'))).toHaveLength(0);
    } finally {
      await fake.close();
    }
  });

  it('replays a trace whose arrivals share one time as a burst, with no rate in the record', async () => {
    const file = join(out, 'burst.jsonl');
    const lines = [0, 1, 2].map(() => ({ timestamp: 50, input_length: 40, output_length: 2 }));
    await writeFile(file, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
    const r = await run({ trace: file, warmup: 0, rounds: 1, requestsPerRound: undefined, concurrency: undefined });
    expect(r.failure).toBeUndefined();
    const level = r.record.levels[0]!;
    expect(level.rate).toBeUndefined();
    expect(level.burst).toBe(3);
    expect(r.requests.filter((q) => q.ok)).toHaveLength(3);
    expect(new Set(r.requests.map((q) => q.scheduledMs)).size).toBe(1);
  });

  it('refuses a trace record longer than the server context', async () => {
    const file = join(out, 'long.jsonl');
    await writeFile(file, JSON.stringify({ timestamp: 0, input_length: 5000, output_length: 8 }) + '\n');
    const r = await run({ trace: file, warmup: 0, rounds: 1, requestsPerRound: undefined });
    expect(r.failure).toMatch(/record 1 has 5000 prompt \+ 8 output tokens, more than the server's context of 4096/);
  });
});
