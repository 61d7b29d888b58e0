import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { fmtShare } from '../../src/shared/format.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RequestRecord } from '../../src/shared/request-record.js';
import type { Check, RunRecord } from '../../src/shared/run-record.js';
import { startFakeOpenAi } from '../fakes/fake-openai-server.js';
import { startHostileServer } from '../fakes/hostile-server.js';
import { startLlamaCppLike } from '../fakes/llamacpp-like-server.js';
import type { ControlFault, LlamaCppLikeServer } from '../fakes/llamacpp-like-server.js';
import { runCliAsync } from '../fakes/run-cli.js';
import { startQueuedServer } from './queued-server.js';

const MODEL = 'llama-like.gguf';
const cleanups: Array<() => Promise<void>> = [];
let out: string;
beforeEach(async () => {
  out = await mkdtemp(join(tmpdir(), 'sb-workloads-'));
});
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
  await rm(out, { recursive: true, force: true });
});

async function llama(options: Parameters<typeof startLlamaCppLike>[0]): Promise<LlamaCppLikeServer> {
  const server = await startLlamaCppLike(options);
  cleanups.push(() => server.close());
  return server;
}

/** A workload's files, written into the test's folder (outside the run folder). */
async function file(name: string, lines: unknown[]): Promise<string> {
  const path = join(out, '..', `${out.split('/').pop()}-${name}`);
  await writeFile(path, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
  cleanups.push(() => rm(path, { force: true }));
  return path;
}

/** Runs `servebench run` (one round, tiny) and reads back what its run folder kept. */
async function run(url: string, args: string[]) {
  const res = await runCliAsync(['run', '--url', url, '--model', MODEL, '--rounds', '1', '--out', out, ...args]);
  const [name] = await readdir(out);
  let record: RunRecord | null = null;
  let requests: RequestRecord[] = [];
  if (name) {
    const dir = join(out, name);
    record = JSON.parse(await readFile(join(dir, 'run.json'), 'utf8')) as RunRecord;
    requests = (await readFile(join(dir, 'requests.jsonl'), 'utf8').catch(() => ''))
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as RequestRecord);
  }
  return { ...res, record, requests };
}

function levelCheck(record: RunRecord | null, id: string): Check {
  const found = record?.levels[0]?.checks.find((c) => c.id === id);
  expect(found, id).toBeDefined();
  return found!;
}

/** The run ended on one line naming the problem: no stack trace, nothing after it. */
function oneLine(stderr: string): string {
  const lines = stderr.trim().split('\n');
  const last = lines[lines.length - 1] ?? '';
  expect(stderr).not.toMatch(/\n\s+at /);
  expect(last).toMatch(/^servebench run: /);
  return last;
}

const TINY = ['--warmup', '0', '--input-len', '32', '--output-len', '8'];

describe('multi-turn conversations on llama.cpp', () => {
  it('each history is counted through /apply-template + /tokenize, exactly as the server counts it, with TTFT per turn', async () => {
    const server = await llama({ slots: 2, nCtx: 4096 });
    const res = await run(server.url, [...TINY, '--turns', '3', '--concurrency', '2', '--requests-per-round', '6']);
    expect(res.status === 0 || res.status === 1, res.stderr).toBe(true);
    expect(res.record?.status).toBe('completed');
    expect(res.requests).toHaveLength(6);
    for (const r of res.requests) {
      expect(r.ok, r.error ?? '').toBe(true);
      expect(r.expectedInSource).toBeUndefined();
      expect(r.nIn).toBe(r.expectedIn);
    }
    const byTurn = (t: number) => res.requests.filter((r) => r.workload?.turn === t).map((r) => r.nIn!);
    expect(Math.min(...byTurn(1))).toBeGreaterThan(Math.max(...byTurn(0)));
    expect(Math.min(...byTurn(2))).toBeGreaterThan(Math.max(...byTurn(1)));
    expect(levelCheck(res.record, 'input-length').status).toBe('pass');
    const turns = res.record?.levels[0]?.byTurn ?? [];
    expect(turns.map((t) => t.ttftMs.n)).toEqual([2, 2, 2]);
    expect(turns.map((t) => t.inputTokens)).toEqual([0, 1, 2].map((t) => byTurn(t)[0]));
    expect(server.openSockets()).toBe(0);
  }, 120_000);

  it('open loop (--rate): histories counted exactly and each first turn keeps its schedule', async () => {
    const server = await llama({ slots: 2, nCtx: 4096 });
    const res = await run(server.url, [...TINY, '--turns', '2', '--rate', '50', '--requests-per-round', '4']);
    expect(res.record?.status, res.stderr).toBe('completed');
    expect(res.requests.every((r) => r.ok && r.nIn === r.expectedIn && r.expectedInSource === undefined)).toBe(true);
    expect(res.requests.filter((r) => r.workload?.turn === 0).every((r) => typeof r.scheduledMs === 'number')).toBe(
      true,
    );
    expect(res.record?.levels[0]?.scheduleLagMs?.n).toBe(2);
  }, 120_000);

  it("a history outgrowing the slot's context: the server's own 400 is quoted in the errors check, earlier turns kept", async () => {
    // 10 turns of 32 + 8 pass the up-front context check (400 <= 405), but the chat template's own tokens push the
    // last turn's prompt to 410: llama.cpp refuses it, as it would a real conversation that grew past n_ctx.
    const server = await llama({ slots: 1, nCtx: 405 });
    const res = await run(server.url, [...TINY, '--turns', '10', '--concurrency', '1', '--requests-per-round', '10']);
    expect(res.record?.status, res.stderr).toBe('completed');
    expect(res.status).toBe(1);
    expect(res.requests).toHaveLength(10);
    expect(res.requests.slice(0, 9).every((r) => r.ok)).toBe(true);
    const last = res.requests[9]!;
    expect(last.ok).toBe(false);
    expect(last.httpStatus).toBe(400);
    const errors = levelCheck(res.record, 'errors');
    expect(errors.status).toBe('fail');
    expect(errors.facts?.commonestMessage).toMatch(/exceeds the available context size \(405 tokens\)/);
    expect(res.stdout + res.stderr).toMatch(/exceeds the available context size/);
  }, 120_000);
});

describe('prompt files on llama.cpp', () => {
  const records = [
    {
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Name three rivers.' },
      ],
    },
    { prompt: 'Explain how tides work.', output_len: 5 },
    {
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: 'hello there' },
        { role: 'user', content: 'write a poem about the sea' },
      ],
      output_len: 6,
    },
  ];

  it('message lists fitted to --input-len: every request has exactly the asked tokens by the server count', async () => {
    const server = await llama({ slots: 2, nCtx: 4096 });
    const prompts = await file('prompts.jsonl', records);
    const res = await run(server.url, [
      ...TINY,
      '--prompts',
      prompts,
      '--concurrency',
      '2',
      '--requests-per-round',
      '3',
    ]);
    expect(res.record?.status, res.stderr).toBe('completed');
    expect(res.requests.map((r) => r.workload?.sourceIndex)).toEqual([0, 1, 2]);
    expect(res.requests.every((r) => r.ok && r.nIn === 32 && r.nOut === 8)).toBe(true);
    expect(levelCheck(res.record, 'input-length').status).toBe('pass');
  }, 120_000);

  it("the file's own lengths: each prompt counted ahead as llama.cpp counts it (template and BOS), its output the record's", async () => {
    const server = await llama({ slots: 2, nCtx: 4096 });
    const prompts = await file('prompts.jsonl', [{ ...records[0], output_len: 4 }, records[1], records[2]]);
    const res = await run(server.url, [
      ...TINY,
      '--prompts',
      prompts,
      '--prompt-lengths',
      'file',
      '--output-lengths',
      'file',
      '--concurrency',
      '2',
      '--requests-per-round',
      '3',
    ]);
    expect(res.record?.status, res.stderr).toBe('completed');
    expect(res.requests.map((r) => r.nOut)).toEqual([4, 5, 6]);
    // One token a word, BOS, and 3 template tokens a message: 1 + (2+3) + (3+3), 1 + (4+3), 1 + (1+3) + (2+3) + (6+3).
    expect(res.requests.map((r) => [r.ok, r.expectedInSource, r.expectedIn, r.nIn])).toEqual([
      [true, undefined, 12, 12],
      [true, undefined, 8, 8],
      [true, undefined, 19, 19],
    ]);
    expect(levelCheck(res.record, 'input-length').status).toBe('pass');
  }, 120_000);
});

describe('a strict OpenAI-like server (no /tokenize)', () => {
  async function strict(args: string[]) {
    const server = await startFakeOpenAi({ strict: true, usage: 'final', model: MODEL });
    cleanups.push(() => server.close());
    return run(server.url, [...TINY, ...args]);
  }

  it("multi-turn: later turns take the server's count, marked, and the input-length check says so", async () => {
    const res = await strict(['--turns', '2', '--concurrency', '2', '--requests-per-round', '4']);
    expect(res.record?.status, res.stderr).toBe('completed');
    expect(res.requests.every((r) => r.ok)).toBe(true);
    const later = res.requests.filter((r) => r.workload?.turn === 1);
    expect(later.map((r) => r.expectedInSource)).toEqual(['server', 'server']);
    expect(levelCheck(res.record, 'input-length').code).toBe('not-counted-ahead');
  }, 120_000);

  it("a prompt file with its own lengths: every request's input is the server's count, marked unverified", async () => {
    const prompts = await file('p.jsonl', [
      { prompt: 'one two three' },
      { messages: [{ role: 'user', content: 'hi' }] },
    ]);
    const res = await strict([
      '--prompts',
      prompts,
      '--prompt-lengths',
      'file',
      '--concurrency',
      '2',
      '--requests-per-round',
      '2',
    ]);
    expect(res.record?.status, res.stderr).toBe('completed');
    expect(res.requests.map((r) => [r.ok, r.expectedInSource, r.nIn])).toEqual([
      [true, 'server', 10],
      [true, 'server', 8],
    ]);
  }, 120_000);

  for (const [name, args] of [
    ['shared prefix', ['--prefix-groups', '2', '--prefix-len', '16']],
    ['a prompt file fitted to --input-len', ['--prompts', 'FILE']],
    ['trace replay', ['--trace', 'TRACE']],
  ] as const) {
    it(`${name}: refused on one line naming the fix, no request sent`, async () => {
      const prompts = await file('p.jsonl', [{ prompt: 'one two three' }]);
      const trace = await file('t.jsonl', [{ timestamp: 0, input_length: 40, output_length: 8, hash_ids: [0] }]);
      const res = await strict([
        ...args.map((a) => (a === 'FILE' ? prompts : a === 'TRACE' ? trace : a)),
        '--concurrency',
        '2',
        '--requests-per-round',
        '2',
      ]);
      expect(res.status).toBe(2);
      expect(oneLine(res.stderr)).toMatch(
        /needs the server's \/tokenize to count each prompt; this server has none.*: use /,
      );
      expect(res.requests).toEqual([]);
    }, 120_000);
  }
});

describe('shared prefix on llama.cpp', () => {
  it("--metrics on, yet no prefix-cache counter: the hit rate comes from the responses' cache_n, not made up", async () => {
    const server = await llama({ slots: 2, nCtx: 4096, metrics: true });
    const res = await run(server.url, [
      ...TINY,
      '--input-len',
      '48',
      '--prefix-groups',
      '2',
      '--prefix-len',
      '16',
      '--concurrency',
      '2',
      '--requests-per-round',
      '6',
    ]);
    expect(res.record?.status, res.stderr).toBe('completed');
    expect(res.requests.map((r) => r.workload?.group)).toEqual([0, 1, 0, 1, 0, 1]);
    expect(res.requests.every((r) => r.ok && r.nIn === 48)).toBe(true);
    // The engine has no counter; each response says how much of its prompt the slot reused (timings.cache_n).
    expect(res.record?.levels[0]?.telemetry?.prefixCacheHitRate ?? null).toBeNull();
    const cached = res.requests.map((r) => r.cachedPromptTokens ?? -1);
    // The first of each group finds at most BOS and the template's opening on its slot (left by the API probe).
    expect(cached.slice(0, 2).every((n) => n >= 0 && n < 16)).toBe(true);
    // Each count is what the server reused for that request: a later request finds its group's prefix (16 tokens
    // and more) only if the slot freed first last ran its group, which the order requests finish in decides.
    expect(cached).toEqual(res.requests.map((r) => server.reusedByTag.get(r.requestTag)));
    expect(cached.slice(2).every((n) => n < 48)).toBe(true);
    const total = cached.reduce((a, b) => a + b, 0);
    expect(res.record?.levels[0]?.responseCache).toMatchObject({
      requests: 6,
      of: 6,
      cachedTokens: total,
      openingCounted: true,
      hitRate: total / (6 * 48),
    });
    const cache = levelCheck(res.record, 'prefix-cache');
    expect(cache.status).toBe('pass');
    expect(cache.facts?.cachedTokens).toBe(total);
    const hitShown = fmtShare(total / (6 * 48)).replace('.', '\\.');
    // The CLI's table shows it in its cache-hit column.
    expect(res.stdout).toMatch(new RegExp(`cache hit[^\\n]*\\n\\s+2\\s.*\\s${hitShown}\\s`));
    // Its /metrics was scraped (the first scrape is at the start), and carries no prefix-cache counter to read.
    const samples = (await readFile(join(out, (await readdir(out))[0]!, 'telemetry.jsonl'), 'utf8'))
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { kind: string; prefixCacheHitsTotal?: number | null; running?: number | null });
    const engine = samples.filter((t) => t.kind === 'engine');
    expect(engine.length).toBeGreaterThan(0);
    expect(engine.every((t) => t.prefixCacheHitsTotal === null && typeof t.running === 'number')).toBe(true);
  }, 120_000);
});

describe('trace replay against a queued server', () => {
  it('a long queue (1 slot, 12 arrivals at once): lag recorded, every request served, no client failure from the queue', async () => {
    const server = await startQueuedServer({ slots: 1, prefillMs: 5, model: MODEL });
    cleanups.push(() => server.close());
    const trace = await file(
      'trace.jsonl',
      Array.from({ length: 12 }, (_, i) => ({ timestamp: i, input_length: 40, output_length: 8, hash_ids: [0] })),
    );
    const res = await run(server.url, ['--warmup', '0', '--trace', trace, '--requests-per-round', '12']);
    expect(res.record?.status, res.stderr).toBe('completed');
    expect(server.peakBusy).toBe(1);
    expect(res.requests).toHaveLength(12);
    expect(res.requests.every((r) => r.ok && r.nIn === 40 && typeof r.scheduledMs === 'number')).toBe(true);
    expect(res.record?.levels[0]?.scheduleLagMs?.n).toBe(12);
    // The queue delays first tokens, not sends: the schedule lag stays the client's own and never blames it.
    const client = levelCheck(res.record, 'client');
    if (client.status === 'fail') expect(client.code).toBe('client-lag');
    expect(levelCheck(res.record, 'errors').status).toBe('pass');
  }, 120_000);
});

/** Each workload's arguments, its files written on demand. */
const WORKLOADS: Record<string, () => Promise<string[]>> = {
  'multi-turn': async () => ['--turns', '2', '--concurrency', '2', '--requests-per-round', '4'],
  'shared prefix': async () => [
    '--prefix-groups',
    '2',
    '--prefix-len',
    '16',
    '--concurrency',
    '2',
    '--requests-per-round',
    '4',
  ],
  'prompt file': async () => [
    '--prompts',
    await file('p.jsonl', [{ messages: [{ role: 'user', content: 'hello world' }] }]),
    '--concurrency',
    '2',
    '--requests-per-round',
    '4',
  ],
  'trace replay': async () => [
    '--trace',
    await file(
      't.jsonl',
      Array.from({ length: 4 }, (_, i) => ({ timestamp: i, input_length: 40, output_length: 8, hash_ids: [0] })),
    ),
    '--requests-per-round',
    '4',
  ],
};

/** Runs one workload against a llama.cpp whose control endpoint misbehaves (short --timeout bounds a hang). */
async function faulty(workload: string, fault: ControlFault) {
  const server = await llama({ slots: 2, nCtx: 4096, controlFault: fault });
  const res = await run(server.url, [...TINY, '--timeout', '2', ...(await WORKLOADS[workload]!())]);
  return { server, res };
}

describe('hostile control endpoints during each workload: one clear line, nothing left open', () => {
  for (const workload of Object.keys(WORKLOADS)) {
    it(`${workload}: /apply-template hangs: the run stops on one line naming --timeout`, async () => {
      const { server, res } = await faulty(workload, { path: '/apply-template', mode: 'hang' });
      expect(res.status).toBe(2);
      expect(oneLine(res.stderr)).toMatch(/apply-template gave no complete answer within 2 s \(--timeout\)/);
      // The run folder says how it ended.
      expect(res.record?.status).toBe('failed');
      expect(server.faulted).toBeGreaterThan(0);
      expect(server.openSockets()).toBe(0);
    }, 120_000);

    it(`${workload}: /tokenize answers without end: the run stops on one line, the answer cut at its cap`, async () => {
      const { server, res } = await faulty(workload, { path: '/tokenize', mode: 'endless-line' });
      expect(res.status).toBe(2);
      expect(oneLine(res.stderr)).toMatch(/tokenize answered more than 16 MiB/);
      expect(res.record?.status).toBe('failed');
      expect(server.openSockets()).toBe(0);
    }, 120_000);

    it(`${workload}: /tokenize answers an HTML page: counted by the server's usage or refused on one line`, async () => {
      const { server, res } = await faulty(workload, { path: '/tokenize', mode: 'html' });
      if (workload === 'multi-turn') {
        // Multi-turn can run without a tokenizer: later turns take the server's count, marked unverified.
        expect(res.record?.status, res.stderr).toBe('completed');
        expect(res.requests.every((r) => r.ok)).toBe(true);
        expect(res.requests.filter((r) => r.workload?.turn === 1).every((r) => r.expectedInSource === 'server')).toBe(
          true,
        );
        expect(levelCheck(res.record, 'input-length').status).toBe('warn');
        expect(res.stdout + res.stderr).toMatch(/\/tokenize answered 200 text\/html.*not a token count/);
      } else {
        expect(res.status).toBe(2);
        expect(oneLine(res.stderr)).toMatch(
          /needs the server's \/tokenize to count each prompt; POST \S+\/tokenize answered 200 text\/html.*not a token count.*Point --url at the server itself, or use /,
        );
        expect(res.requests).toEqual([]);
      }
      expect(server.openSockets()).toBe(0);
    }, 120_000);
  }

  it('multi-turn: the history count hangs mid-level: every turn is measured, the hung counts marked unverified', async () => {
    const { server, res } = await faulty('multi-turn', { path: '/apply-template', mode: 'hang', onlyHistory: true });
    expect(res.record?.status, res.stderr).toBe('completed');
    expect(server.faulted).toBeGreaterThan(0);
    expect(res.stdout + res.stderr).toMatch(
      /a multi-turn history could not be counted \(POST \S+\/apply-template gave no complete answer within 2 s \(--timeout\)/,
    );
    expect(res.requests).toHaveLength(4);
    expect(res.requests.every((r) => r.ok)).toBe(true);
    const later = res.requests.filter((r) => r.workload?.turn === 1);
    expect(later.every((r) => r.expectedInSource === 'server' && r.expectedIn === r.nIn)).toBe(true);
    const input = levelCheck(res.record, 'input-length');
    expect(input.status).toBe('warn');
    expect(input).toMatchObject({
      code: 'not-counted-ahead',
      facts: { uncountedRequests: 2, requests: 4, multiTurn: true },
    });
    expect(server.openSockets()).toBe(0);
  }, 120_000);
});

describe('hostile completions during a multi-turn run', () => {
  it('an endless line: the turn fails as truncated, its later turn is skipped, the run folder keeps it', async () => {
    const server = await startHostileServer('endless-line', { endlessBytes: 4 << 20 });
    cleanups.push(() => server.close());
    const res = await run(server.url, [
      ...TINY,
      '--timeout',
      '2',
      '--turns',
      '2',
      '--concurrency',
      '1',
      '--requests-per-round',
      '2',
    ]);
    expect(res.record?.status, res.stderr).toBe('completed');
    expect(res.status).toBe(1);
    expect(res.requests).toHaveLength(1);
    expect(res.requests[0]?.ok).toBe(false);
    expect(res.record?.levels[0]?.skippedTurns).toBe(1);
    expect(levelCheck(res.record, 'errors').facts?.skippedTurns).toBe(1);
  }, 120_000);

  it('an HTML page instead of a stream: one line naming --url and --api', async () => {
    const server = await startHostileServer('html-200');
    cleanups.push(() => server.close());
    const res = await run(server.url, [...TINY, '--turns', '2', '--concurrency', '1', '--requests-per-round', '2']);
    expect(res.status).toBe(2);
    expect(oneLine(res.stderr)).toMatch(/text\/html, not an event stream.*check --url and --api/);
  }, 120_000);
});
