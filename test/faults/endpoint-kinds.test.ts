import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runBenchmark } from '../../src/core/benchmark.js';
import { BenchConfigSchema } from '../../src/shared/config.js';
import type { RequestRecord } from '../../src/shared/request-record.js';
import { attachTo } from '../fakes/attached-server.js';
import { startResponsesServer, type ResponsesServerOptions } from '../fakes/vllm-responses-server.js';
import {
  startEndpointsServer,
  type EndpointsServer,
  type EndpointsServerOptions,
} from '../fakes/llamacpp-endpoints-server.js';

let server: EndpointsServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

async function runOn(
  options: EndpointsServerOptions | ResponsesServerOptions,
  api: 'embeddings' | 'rerank' | 'messages' | 'responses',
  batchSize = 1,
) {
  server =
    api === 'responses'
      ? await startResponsesServer(options as ResponsesServerOptions)
      : await startEndpointsServer(options as EndpointsServerOptions);
  const out = await mkdtemp(join(tmpdir(), `sb-llama-${api}-`));
  const config = BenchConfigSchema.parse({
    out,
    api,
    ...(api === 'messages' || api === 'responses' ? {} : { batchSize }),
    concurrency: [2],
    inputLen: [24],
    outputLen: [5],
    rounds: 2,
    requestsPerRound: 4,
    warmup: 2,
    server: { engine: 'attach', url: server.url },
  });
  const result = await runBenchmark(config, {
    startServer: attachTo(server.url, { model: 'bge-m3', simulated: false }),
  });
  const requests = result.dir
    ? (await readFile(join(result.dir, 'requests.jsonl'), 'utf8').catch(() => ''))
        .trim()
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as RequestRecord)
    : [];
  return { result, requests };
}

describe("endpoint kinds against a stand-in written from llama.cpp's tools/server", () => {
  it('embeddings: inputs counted with their BOS and EOS, verified by usage', async () => {
    const { result, requests } = await runOn({}, 'embeddings', 3);
    expect(result.failure).toBeUndefined();
    expect(requests.every((r) => r.ok && r.nIn === 3 * 24 && r.nIn === r.expectedIn)).toBe(true);
    expect(result.record.levels[0]!.checks.map((c) => [c.id, c.code])).toContainEqual(['input-length', 'exact']);
  });

  it("rerank: each pair's query and special tokens measured once, every request verified", async () => {
    const { result, requests } = await runOn({}, 'rerank', 4);
    expect(result.failure).toBeUndefined();
    expect(requests.every((r) => r.ok && r.nIn === r.expectedIn && r.expectedInSource === undefined)).toBe(true);
  });

  it('messages: its events timed, counts from message_start and message_delta', async () => {
    const { result, requests } = await runOn({ model: 'qwen' }, 'messages');
    expect(result.failure).toBeUndefined();
    expect(requests.every((r) => r.ok && r.nOut === 5 && r.nIn === r.expectedIn && r.chunks.length === 5)).toBe(true);
  });
});

describe("the Responses API against a stand-in written from vLLM's protocol", () => {
  it('reasoning and answer deltas timed apart, counts from response.completed', async () => {
    const { result, requests } = await runOn({ reasoningTokens: 2 }, 'responses');
    expect(result.failure).toBeUndefined();
    const measured = requests.filter((r) => !r.warmup);
    expect(measured.every((r) => r.ok && r.nOut === 5 && r.nIn === r.expectedIn && r.nReasoning === 2)).toBe(true);
    expect(measured.every((r) => r.firstContentMs! > r.firstTokenMs!)).toBe(true);
    expect(result.record.levels[0]!.ttfoMs?.n).toBe(measured.length);
  });
});

describe('hostile stand-ins: one clear line each', () => {
  it('Messages events answered to /v1/responses fail as wrong events', async () => {
    const { result } = await runOn({ mode: 'messages-events' }, 'responses');
    const line = result.record.levels[0]?.topError?.message ?? result.failure;
    expect(line).toMatch(/'message_start' events, not OpenAI's Responses events/);
  });

  it('chat chunks answered to /v1/messages fail every request as wrong events', async () => {
    const { result, requests } = await runOn({ model: 'qwen', mode: 'chat-chunks' }, 'messages');
    const failed = requests.filter((r) => !r.ok);
    expect(failed.length).toBeGreaterThan(0);
    expect(failed.every((r) => r.errorKind === 'wrong-events')).toBe(true);
    expect(result.record.levels[0]?.topError?.message ?? result.failure).toMatch(
      /chat-completions chunks, not Anthropic's Messages events/,
    );
  });

  it('a malformed embeddings answer stops the run before any level, in one line', async () => {
    const { result } = await runOn({ mode: 'malformed-json' }, 'embeddings', 2);
    expect(result.failure).toMatch(/the embeddings answer is no JSON/);
    expect(result.failure).not.toContain('\n');
  });

  it('a server that answers fewer embeddings than inputs is named with the fix', async () => {
    const { result } = await runOn({ mode: 'cut-batch' }, 'embeddings', 2);
    expect(result.failure).toMatch(/answered 1 embeddings for 2 inputs: it cut the batch; lower --batch-size/);
  });
});
