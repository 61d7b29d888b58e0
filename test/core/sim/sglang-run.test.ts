import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runBenchmark } from '../../../src/core/benchmark.js';
import { DEFAULT_SIM_MODEL, type Mimic } from '../../../src/core/sim/index.js';
import { BenchConfigSchema } from '../../../src/shared/config.js';
import type { RequestRecord } from '../../../src/shared/request-record.js';
import type { Check, RunRecord } from '../../../src/shared/run-record.js';
import { attachTo } from '../../fakes/attached-server.js';
import { closeAll, readTruth, startSim, tempDir, testProfile } from './helpers.js';

afterAll(closeAll);
const dir = tempDir();

// Checks whose verdict depends on how busy this machine is (event-loop lag, timer spread, reads merged under load),
// not on the wire format: compared only for a fail on the streaming shape.
const LOAD_SENSITIVE = new Set(['client', 'round-spread', 'streaming']);

interface Run {
  record: RunRecord;
  requests: RequestRecord[];
  truth: ReturnType<typeof readTruth>;
}

/** One attached run (c=1 and c=4, 8 tokens out) against a simulator with `mimic`'s wire format and its truth log. */
async function runAgainst(mimic: Mimic): Promise<Run> {
  const truthFile = join(dir, `${mimic}.jsonl`);
  const sim = await startSim({ profile: testProfile({ 'step-base-ms': 2, 'step-per-seq-ms': 0.1 }), mimic, truthFile });
  const out = await mkdtemp(join(tmpdir(), `sb-${mimic}-`));
  try {
    const config = BenchConfigSchema.parse({
      out,
      label: mimic,
      concurrency: [1, 4],
      inputLen: [32],
      outputLen: [8],
      rounds: 2,
      requestsPerRound: 8,
      warmup: 2,
      server: { engine: 'attach', url: sim.url },
    });
    const result = await runBenchmark(config, {
      startServer: attachTo(sim.url, { model: DEFAULT_SIM_MODEL, simulated: false }),
    });
    expect(result.failure).toBeUndefined();
    const requests = (await readFile(join(result.dir, 'requests.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as RequestRecord);
    await sim.close();
    return { record: result.record, requests, truth: readTruth(truthFile) };
  } finally {
    await rm(out, { recursive: true, force: true });
  }
}

/** Every check of a run by a stable key: run-level ones by id, level ones by level index and id. */
function checksOf(record: RunRecord): Map<string, Check> {
  const all = new Map<string, Check>();
  for (const c of record.checks) all.set(c.id, c);
  record.levels.forEach((level, i) => {
    for (const c of level.checks) all.set(`level ${i} ${c.id}`, c);
  });
  return all;
}

describe('a run against the SGLang mimic', () => {
  it('passes every check the vLLM mimic passes, its tokens and chunks agreeing with the truth log', async () => {
    const vllm = await runAgainst('vllm');
    const sglang = await runAgainst('sglang');
    const v = checksOf(vllm.record);
    const s = checksOf(sglang.record);
    expect([...s.keys()].sort()).toEqual([...v.keys()].sort());
    for (const [key, check] of v) {
      const id = check.id;
      if (LOAD_SENSITIVE.has(id)) continue;
      if (check.status === 'pass') expect(s.get(key), key).toMatchObject({ status: 'pass' });
    }
    for (const [key, check] of s) {
      if (check.id === 'streaming') expect(check.status, `${key}: ${check.detail}`).not.toBe('fail');
    }
    // The checks that read the stream's shape and counts pass outright.
    for (const level of sglang.record.levels) {
      for (const id of ['output-length', 'input-length', 'token-agreement', 'errors']) {
        expect(level.checks.find((c) => c.id === id)?.status, `c=${level.concurrency} ${id}`).toBe('pass');
      }
      expect(level.failed).toBe(0);
      expect(level.ttftMs.p50).not.toBeNull();
      expect(level.tpotMs.p50).not.toBeNull();
    }
    // Per request: 8 tokens in 8 chunks of one (the role, finish and usage chunks carry none), counted by the server,
    // and the truth log wrote the same chunks, no later than the client read them.
    const origin = BigInt(sglang.record.clock.originMonoNs);
    const ms = (ns: string): number => Number(BigInt(ns) - origin) / 1e6;
    const truth = new Map(sglang.truth.map((t) => [t.requestId, t]));
    expect(sglang.requests.filter((r) => !r.warmup)).toHaveLength(32);
    for (const r of sglang.requests) {
      expect(r, r.requestTag).toMatchObject({ ok: true, nOut: 8, nOutSource: 'server', chunkTokensSource: 'server' });
      expect(r.chunks.map((c) => c[1])).toEqual([1, 1, 1, 1, 1, 1, 1, 1]);
      const t = truth.get(r.requestTag)!;
      expect(t, r.requestTag).toMatchObject({ completionTokens: 8, finishReason: 'length' });
      expect(t.chunks.map((c) => c[1])).toEqual([1, 1, 1, 1, 1, 1, 1, 1]);
      r.chunks.forEach(([atMs], i) => expect(atMs).toBeGreaterThanOrEqual(ms(t.chunks[i]![0])));
      expect(r.firstTokenMs!).toBeGreaterThanOrEqual(ms(t.firstTokenNs!));
    }
  }, 120_000);
});
