import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runBenchmark } from '../../../src/core/benchmark.js';
import type { StartServer } from '../../../src/core/servers/types.js';
import { BenchConfigSchema, type BenchConfigInput } from '../../../src/shared/config.js';
import type { RequestRecord } from '../../../src/shared/request-record.js';
import { attachedServer } from '../../fakes/attached-server.js';
import { startFakeOpenAi } from '../../fakes/fake-openai-server.js';
import { closeAll, startSim, testProfile } from '../sim/helpers.js';

const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  await closeAll();
  await Promise.all(cleanups.map((c) => c()));
});

let out: string;
beforeEach(async () => {
  out = await mkdtemp(join(tmpdir(), 'sb-sweep-workload-'));
});
afterEach(async () => {
  await rm(out, { recursive: true, force: true });
});

/** One fresh simulator per server configuration (the server restarts between configurations). */
const simPerConfig: StartServer = async () => {
  const sim = await startSim({ profile: testProfile({ 'max-model-len': 4096 }), model: 'sim-model' });
  return attachedServer({ engine: 'attach', baseUrl: sim.url, model: 'sim-model', simulated: true }, () => sim.close());
};

/** A server sweep of two configurations; its requests, in send order. */
async function sweep(config: BenchConfigInput, startServer: StartServer = simPerConfig) {
  const result = await runBenchmark(
    BenchConfigSchema.parse({
      out,
      label: 'sweep',
      rounds: 1,
      requestsPerRound: 3,
      warmup: 1,
      concurrency: [1],
      outputLen: [4],
      server: { engine: 'attach', url: 'http://127.0.0.1:9' },
      serverVariants: [{ extraArgs: ['--step-base-ms', '1'] }, { extraArgs: ['--step-base-ms', '2'] }],
      ...config,
    }),
    { startServer },
  );
  const requests = (await readFile(join(result.dir, 'requests.jsonl'), 'utf8'))
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as RequestRecord)
    .sort((a, b) => a.id - b.id);
  return { result, requests };
}

describe('a server sweep with a prompt file', () => {
  it('replays the same file records in every server configuration, level by level', async () => {
    const file = join(out, 'prompts.jsonl');
    const lines = Array.from({ length: 20 }, (_, i) => ({
      prompt: `question ${i} ${'word '.repeat(i + 3)}`,
      output_len: 2 + (i % 3),
    }));
    await writeFile(file, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
    const { result, requests } = await sweep({
      prompts: file,
      promptLengths: 'file',
      outputLengths: 'file',
      inputLen: [16, 32],
    });
    expect(result.failure).toBeUndefined();
    expect(result.record.levels.map((l) => l.serverConfigIndex)).toEqual([0, 0, 1, 1]);
    const sources = (level: number): Array<number | undefined> =>
      requests.filter((r) => r.levelIndex === level).map((r) => r.workload?.sourceIndex);
    // Each level of the second configuration sends what the same level of the first sent.
    expect(sources(0)).toEqual([0, 1, 2, 3]);
    expect(sources(1)).toEqual([4, 5, 6, 7]);
    expect(sources(2)).toEqual(sources(0));
    expect(sources(3)).toEqual(sources(1));
    const lengths = (level: number): Array<[number | undefined, number | undefined]> =>
      requests.filter((r) => r.levelIndex === level).map((r) => [r.expectedIn, r.expectedOut]);
    expect(lengths(2)).toEqual(lengths(0));
    expect(lengths(3)).toEqual(lengths(1));
  });
});

describe('a server sweep whose later configuration refuses every request', () => {
  it('stops at that configuration’s first batch, as it would at the run’s first', async () => {
    const good = await startFakeOpenAi({ tokenize: true });
    // Passes the connection probe, then answers every request 400 (a setting this configuration cannot serve).
    const refusing = await startFakeOpenAi({ tokenize: true, status: 400, statusAfter: 1 });
    cleanups.push(good.close, refusing.close);
    let started = 0;
    const startServer: StartServer = async () => {
      const fake = started++ === 0 ? good : refusing;
      return attachedServer({ engine: 'attach', baseUrl: fake.url, model: 'fake-model', simulated: false });
    };
    const { result, requests } = await sweep(
      { concurrency: [1, 2], inputLen: [20], requestsPerRound: 2, warmup: 2 },
      startServer,
    );
    expect(result.record.status).toBe('failed');
    expect(result.exitCode).toBe(2);
    expect(result.failure).toMatch(/HTTP 400/);
    // The refusing configuration's second level (level 3) never sent a request.
    expect(requests.filter((r) => r.levelIndex === 3)).toEqual([]);
    expect(requests.filter((r) => r.levelIndex === 2).every((r) => !r.ok)).toBe(true);
  });
});
