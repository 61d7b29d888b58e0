import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runBenchmark } from '../../../src/core/benchmark.js';
import { FULL_COMPAT } from '../../../src/core/load/request-body.js';
import { ServerApi } from '../../../src/core/load/server-api.js';
import type { RunningServer, StartServer } from '../../../src/core/servers/types.js';
import { countChatTokens, tokenizeChat, tokenizeCompletion } from '../../../src/core/sim/index.js';
import { BenchConfigSchema, type BenchConfigInput } from '../../../src/shared/config.js';
import type { RequestRecord } from '../../../src/shared/request-record.js';
import { closeAll, postJson, startSim, testProfile } from '../sim/helpers.js';

type Obj = Record<string, unknown>;
type Mimic = 'vllm' | 'sglang' | 'openai';

const proxies: Server[] = [];
afterAll(async () => {
  await closeAll();
  await Promise.all(proxies.map((p) => new Promise((r) => p.close(r))));
});

let out: string;
beforeEach(async () => {
  out = await mkdtemp(join(tmpdir(), 'sb-sglang-tok-'));
});
afterEach(async () => {
  await rm(out, { recursive: true, force: true });
});

const sglang = () => startSim({ profile: testProfile({ 'max-model-len': 4096 }), mimic: 'sglang', model: 'sim-model' });

/**
 * An SGLang from before its /tokenize took messages (prompt only: FastAPI answers a body without `prompt` 400),
 * in front of the sim's sglang mimic for everything else.
 */
async function promptOnlySglang(target: string): Promise<string> {
  const proxy = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      const body = Buffer.concat(parts);
      if (req.url === '/tokenize' || req.url === '/v1/tokenize') {
        const json = JSON.parse(body.toString('utf8') || '{}') as Obj;
        if (typeof json.prompt !== 'string' && !Array.isArray(json.prompt)) {
          const text = JSON.stringify({ object: 'error', message: "1 validation error: 'prompt' Field required" });
          res.writeHead(400, { 'content-type': 'application/json' });
          res.end(text);
          return;
        }
      }
      const up = httpRequest(target + req.url, { method: req.method, headers: req.headers }, (u) => {
        res.writeHead(u.statusCode ?? 502, u.headers);
        u.pipe(res);
      });
      up.end(body);
    });
  });
  proxies.push(proxy);
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
}

describe("sim's sglang mimic: /tokenize as SGLang's serving_tokenize.py answers it", () => {
  it('counts a prompt (BOS unless add_special_tokens false), a list of prompts, and chat messages through the template', async () => {
    const s = await sglang();
    for (const path of ['/tokenize', '/v1/tokenize']) {
      const one = (await (await postJson(`${s.url}${path}`, { prompt: 'Hello there, world' })).json()) as Obj;
      expect(one).toEqual({
        tokens: tokenizeCompletion('Hello there, world'),
        count: tokenizeCompletion('Hello there, world').length,
        max_model_len: 4096,
      });
    }
    const bare = (await (
      await postJson(`${s.url}/tokenize`, { prompt: 'a b', add_special_tokens: false })
    ).json()) as Obj;
    expect(bare.count).toBe(2);
    const list = (await (await postJson(`${s.url}/tokenize`, { prompt: ['a', 'b c d'] })).json()) as Obj;
    expect(list.count).toEqual([2, 4]);
    expect((list.tokens as number[][]).map((t) => t.length)).toEqual([2, 4]);
    // Any model name (SGLang does not check it); messages get the chat handler's template, generation prompt included.
    const messages = [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Name a river.' },
    ];
    const chat = (await (await postJson(`${s.url}/tokenize`, { model: 'other', messages })).json()) as Obj;
    expect(chat).toEqual({ tokens: tokenizeChat(messages), count: countChatTokens(messages), max_model_len: 4096 });
    const usage = (await (
      await postJson(`${s.url}/v1/chat/completions`, { model: 'sim-model', messages, max_tokens: 1 })
    ).json()) as { usage: { prompt_tokens: number } };
    expect(usage.usage.prompt_tokens).toBe(chat.count);
  });

  it('refuses both or neither of prompt and messages with 400 and SGLang words', async () => {
    const s = await sglang();
    const both = await postJson(`${s.url}/tokenize`, { prompt: 'x', messages: [{ role: 'user', content: 'x' }] });
    expect(both.status).toBe(400);
    expect(JSON.stringify(await both.json())).toContain("Exactly one of 'prompt' or 'messages' must be provided.");
    expect((await postJson(`${s.url}/tokenize`, {})).status).toBe(400);
    expect((await postJson(`${s.url}/tokenize`, { prompt: 7 })).status).toBe(400);
  });
});

describe('ServerApi.tokenCounter on SGLang', () => {
  const history = [
    { role: 'user' as const, content: 'a b c' },
    { role: 'assistant' as const, content: 'd e' },
    { role: 'user' as const, content: 'f' },
  ];

  it('counts exactly through /tokenize: prompt text for completions, messages for chat', async () => {
    const s = await sglang();
    const api = new ServerApi({ baseUrl: s.url });
    const chat = await api.tokenCounter('chat', 'sim-model', FULL_COMPAT);
    expect(chat.viaTokenize).toBe(true);
    expect(await chat.countMessages!(history)).toBe(countChatTokens(history));
    const completions = await api.tokenCounter('completions', 'sim-model', FULL_COMPAT);
    expect(completions.viaTokenize).toBe(true);
    expect(await completions.counter('a b c')).toBe(tokenizeCompletion('a b c').length);
  });

  it('on a /tokenize without messages: chat calibrates by usage and says completions is exact', async () => {
    const s = await sglang();
    const api = new ServerApi({ baseUrl: await promptOnlySglang(s.url) });
    const chat = await api.tokenCounter('chat', 'sim-model', FULL_COMPAT);
    expect(chat.viaTokenize).toBe(false);
    expect(chat.completionsExact).toBe(true);
    expect(chat.countMessages).toBeUndefined();
    // The usage calibration is still the chat handler's own count.
    expect(await chat.counter('a b c')).toBe(countChatTokens([{ role: 'user', content: 'a b c' }]));
    const completions = await api.tokenCounter('completions', 'sim-model', FULL_COMPAT);
    expect(completions.viaTokenize).toBe(true);
  });
});

/** Attaches the run to a server already listening. */
function attach(url: string): StartServer {
  return async () =>
    ({
      info: { engine: 'attach', baseUrl: url, model: 'sim-model', simulated: true },
      died: new Promise(() => undefined),
      exited: false,
      hasDied: () => null,
      stop: async () => undefined,
      logTail: () => [],
    }) satisfies RunningServer;
}

/** One tiny run against `url` (default: a fresh sim with the given mimic). */
async function run(config: BenchConfigInput, target: { mimic?: Mimic; url?: string } = {}) {
  const url =
    target.url ??
    (await startSim({ profile: testProfile({ 'max-model-len': 4096 }), mimic: target.mimic, model: 'sim-model' })).url;
  const result = await runBenchmark(
    BenchConfigSchema.parse({
      out,
      label: 's',
      rounds: 1,
      requestsPerRound: 4,
      warmup: 1,
      concurrency: [2],
      outputLen: [4],
      inputLen: [48],
      ...config,
      server: { engine: 'attach', url },
    }),
    { startServer: attach(url) },
  );
  const requests = (await readFile(join(result.dir, 'requests.jsonl'), 'utf8').catch(() => ''))
    .trim()
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as RequestRecord);
  const check = (id: string) => result.record.levels[0]?.checks.find((c) => c.id === id);
  return { ...result, requests, check };
}

async function promptFile(lines: Obj[]): Promise<string> {
  const file = join(out, 'p.jsonl');
  await writeFile(file, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
  return file;
}

describe('workloads on the sim as SGLang: exact counts, token-agreement passing', () => {
  const cases: Array<[string, () => Promise<BenchConfigInput>]> = [
    ['synthetic chat', async () => ({ api: 'chat' })],
    ['synthetic completions', async () => ({ api: 'completions' })],
    [
      'a prompt file fitted to --input-len',
      async () => ({ prompts: await promptFile([{ prompt: 'Tell me a story.' }, { prompt: 'Hi there' }]) }),
    ],
    ['shared prefix', async () => ({ prefixGroups: 2, prefixLen: 16 })],
  ];
  for (const [name, config] of cases) {
    it(name, async () => {
      const r = await run(await config(), { mimic: 'sglang' });
      expect(r.failure).toBeUndefined();
      const measured = r.requests.filter((q) => !q.warmup);
      expect(measured).toHaveLength(4);
      expect(measured.every((q) => q.ok && q.nIn === 48 && q.expectedIn === 48)).toBe(true);
      expect(r.check('input-length')?.status).toBe('pass');
      expect(r.check('token-agreement')?.status).toBe('pass');
    });
  }
});

describe('workloads on servers that cannot count prompts exactly ahead', () => {
  it('runs a prompt file (message lists too) at its own lengths, each length the server usage count, marked so', async () => {
    const file = await promptFile([
      { prompt: 'Tell me a story.' },
      {
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'Name three long rivers of Europe.' },
        ],
      },
    ]);
    const r = await run({ prompts: file, promptLengths: 'file' }, { mimic: 'openai' });
    expect(r.failure).toBeUndefined();
    const measured = r.requests.filter((q) => !q.warmup);
    expect(measured).toHaveLength(4);
    expect(measured.every((q) => q.ok && q.expectedIn === q.nIn && q.expectedInSource === 'server')).toBe(true);
    expect(new Set(measured.map((q) => q.nIn)).size).toBe(2);
    // The message list went as it is: its count is the template's over both messages.
    const listed = measured.find((q) => q.workload?.sourceIndex === 1)!;
    expect(listed.nIn).toBe(
      countChatTokens([
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Name three long rivers of Europe.' },
      ]),
    );
    expect(r.check('input-length')?.status).toBe('warn');
    expect(r.check('input-length')).toMatchObject({
      code: 'not-counted-ahead',
      facts: { uncountedRequests: 4, requests: 4, multiTurn: false },
    });
    expect(r.check('token-agreement')?.status).toBe('pass');
  });

  it('refuses shared prefix with no /tokenize in one line naming synthetic prompts', async () => {
    const r = await run({ prefixGroups: 2, prefixLen: 16 }, { mimic: 'openai' });
    expect(r.failure).toBe(
      "--prefix-groups needs the server's /tokenize to count each prompt; this server has none (vLLM, SGLang, llama.cpp and the simulator have it): use synthetic prompts",
    );
    expect(r.exitCode).toBe(2);
  });

  it('refuses a prompt file at fixed lengths with no /tokenize, naming --prompt-lengths file', async () => {
    const r = await run({ prompts: await promptFile([{ prompt: 'Hi' }]) }, { mimic: 'openai' });
    expect(r.failure).toMatch(/^--prompts needs the server's \/tokenize .*use --prompt-lengths file \(/);
  });

  it('names --api completions on an SGLang whose /tokenize takes no messages, and that then counts exactly', async () => {
    const s = await sglang();
    const url = await promptOnlySglang(s.url);
    const chat = await run({ api: 'chat', prefixGroups: 2, prefixLen: 16 }, { url });
    expect(chat.failure).toBe(
      "--prefix-groups needs the server's /tokenize to count each prompt; this server's /tokenize takes no chat messages: use --api completions (its /tokenize counts prompt text exactly), or synthetic prompts",
    );
    const completions = await run({ api: 'completions', prefixGroups: 2, prefixLen: 16 }, { url });
    expect(completions.failure).toBeUndefined();
    expect(completions.check('input-length')?.status).toBe('pass');
    expect(completions.check('token-agreement')?.status).toBe('pass');
  });
});
