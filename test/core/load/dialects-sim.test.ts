import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runBenchmark } from '../../../src/core/benchmark.js';
import { DEFAULT_SIM_MODEL } from '../../../src/core/sim/index.js';
import { BenchConfigSchema } from '../../../src/shared/config.js';
import type { RequestRecord } from '../../../src/shared/request-record.js';
import { attachTo } from '../../fakes/attached-server.js';
import { closeAll, startSim, testProfile } from '../sim/helpers.js';

afterAll(closeAll);

const attach = (url: string) => attachTo(url, { model: DEFAULT_SIM_MODEL, simulated: false });

async function runDialect(api: 'messages' | 'responses', reasoningTokens = 0) {
  const sim = await startSim({
    profile: testProfile({ 'step-base-ms': 1, 'step-per-seq-ms': 0.1, 'reasoning-tokens': reasoningTokens }),
  });
  const out = await mkdtemp(join(tmpdir(), `sb-${api}-`));
  const config = BenchConfigSchema.parse({
    out,
    label: api,
    api,
    concurrency: [2],
    inputLen: [40],
    outputLen: [8],
    rounds: 2,
    requestsPerRound: 6,
    warmup: 2,
    server: { engine: 'attach', url: sim.url },
  });
  const result = await runBenchmark(config, { startServer: attach(sim.url) });
  const requests = (await readFile(join(result.dir, 'requests.jsonl'), 'utf8'))
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as RequestRecord);
  return { result, requests };
}

describe.each(['messages', 'responses'] as const)('the %s API against the simulator', (api) => {
  it('streams its own events; TTFT, lengths and token counts come from its own usage fields', async () => {
    const { result, requests } = await runDialect(api);
    expect(result.failure).toBeUndefined();
    expect(requests.every((r) => r.ok && r.nIn === 40 && r.nOut === 8 && r.nOutSource === 'server')).toBe(true);
    expect(requests.every((r) => r.ttftMs !== null && r.chunks.length === 8)).toBe(true);
    const checks = result.record.levels[0]!.checks.map((c) => [c.id, c.status]);
    for (const id of ['input-length', 'output-length', 'streaming', 'token-agreement'])
      expect(checks).toContainEqual([id, 'pass']);
  });

  it('counts reasoning deltas apart: TTFO after TTFT, reasoning tokens from usage where the API has them', async () => {
    const { result, requests } = await runDialect(api, 3);
    expect(result.failure).toBeUndefined();
    const r = requests.find((x) => !x.warmup)!;
    expect(r.firstContentMs).toBeGreaterThan(r.firstTokenMs!);
    expect(r.nReasoning).toBe(3);
    // Responses usage carries output_tokens_details.reasoning_tokens; Messages usage has no such field.
    expect(r.nReasoningSource).toBe(api === 'responses' ? 'server' : 'estimated');
    expect(result.record.levels[0]!.ttfoMs?.n).toBeGreaterThan(0);
  });
});
