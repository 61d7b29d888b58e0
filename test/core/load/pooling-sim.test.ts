import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runBenchmark } from '../../../src/core/benchmark.js';
import { headlineFacts } from '../../../src/core/report/facts.js';
import { DEFAULT_SIM_MODEL } from '../../../src/core/sim/index.js';
import { BenchConfigSchema } from '../../../src/shared/config.js';
import type { RequestRecord } from '../../../src/shared/request-record.js';
import { ARTICLE_COLUMNS, levelRows, visibleColumns } from '../../../src/shared/report-columns.js';
import { attachTo } from '../../fakes/attached-server.js';
import { closeAll, startSim, testProfile } from '../sim/helpers.js';

afterAll(closeAll);

const attach = (url: string) => attachTo(url, { model: DEFAULT_SIM_MODEL, simulated: false });

async function runPooling(api: 'embeddings' | 'rerank' | 'score', batchSize: number) {
  const sim = await startSim({ profile: testProfile({ 'step-base-ms': 1, 'step-per-seq-ms': 0.1 }) });
  const out = await mkdtemp(join(tmpdir(), `sb-${api}-`));
  const config = BenchConfigSchema.parse({
    out,
    label: api,
    api,
    batchSize,
    concurrency: [2],
    inputLen: [32],
    rounds: 2,
    requestsPerRound: 6,
    warmup: 2,
    gpuPricePerHour: 2,
    server: { engine: 'attach', url: sim.url },
  });
  const result = await runBenchmark(config, { startServer: attach(sim.url) });
  const requests = (await readFile(join(result.dir, 'requests.jsonl'), 'utf8'))
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as RequestRecord);
  return { result, requests };
}

describe('pooling endpoints against the simulator', () => {
  it('embeddings: batches of exact inputs, verified by usage, with inputs/s, input tok/s and their cost', async () => {
    const { result, requests } = await runPooling('embeddings', 4);
    expect(result.failure).toBeUndefined();
    const [level] = result.record.levels;
    expect(requests).toHaveLength(14);
    // 4 inputs of 32 tokens each, counted by the server as sent.
    expect(requests.every((r) => r.ok && r.nIn === 128 && r.expectedIn === 128 && r.nOut === 0)).toBe(true);
    expect(level!.endpoint).toBe('embeddings');
    expect(level!.inputsPerSec).toBeCloseTo(level!.reqPerSec! * 4, 9);
    expect(level!.inputTokPerSec).toBeGreaterThan(0);
    expect(level!.costPerMInputTokUsd).toBeCloseTo((2 / (level!.inputTokPerSec! * 3600)) * 1e6, 9);
    const checks = level!.checks.map((c) => [c.id, c.status, c.code]);
    expect(checks).toContainEqual(['input-length', 'pass', 'exact']);
    // Streaming, output length and token agreement mean nothing for a whole answer: absent, not passed.
    const ids = level!.checks.map((c) => c.id);
    expect(ids).not.toContain('streaming');
    expect(ids).not.toContain('output-length');
    expect(ids).not.toContain('token-agreement');
    expect(ids).toEqual(expect.arrayContaining(['errors', 'round-spread', 'sample-size', 'warmup']));
    const keys = visibleColumns(ARTICLE_COLUMNS, levelRows(result.record)).map((c) => c.key);
    expect(keys).toEqual(expect.arrayContaining(['inputs_s', 'input_tok_s', 'e2e_p50_ms', 'cost_per_m_input_usd']));
    expect(keys.filter((k) => /^(ttft|tpot|itl)_|output_tok_s/.test(k))).toEqual([]);
    // The headline names inputs per request, not an output length nothing was made to.
    expect(headlineFacts(result.record).find((f) => f.label === 'Lengths')?.value).toBe(
      'embeddings: 4 inputs of 32 tokens per request',
    );
  });

  it('rerank: each pair counted ahead with its query and template, verified by usage', async () => {
    const { result, requests } = await runPooling('rerank', 3);
    expect(result.failure).toBeUndefined();
    const [level] = result.record.levels;
    expect(requests.every((r) => r.ok && r.nIn === r.expectedIn && r.expectedInSource === undefined)).toBe(true);
    expect(requests[0]!.nIn).toBeGreaterThan(3 * 32);
    expect(level!.checks.map((c) => [c.id, c.code])).toContainEqual(['input-length', 'exact']);
  });

  it("score (vLLM's /score): text_1 against text_2 documents, each pair counted ahead, one score per document", async () => {
    const { result, requests } = await runPooling('score', 3);
    expect(result.failure).toBeUndefined();
    const [level] = result.record.levels;
    expect(level!.endpoint).toBe('score');
    expect(requests.every((r) => r.ok && r.nIn === r.expectedIn && r.nIn > 3 * 32)).toBe(true);
    expect(level!.checks.map((c) => [c.id, c.code])).toContainEqual(['input-length', 'exact']);
    expect(headlineFacts(result.record).find((f) => f.label === 'Lengths')?.value).toBe(
      'score: 3 documents of 32 tokens per request',
    );
  });
});
