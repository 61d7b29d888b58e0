import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunRecord } from '../../src/shared/run-record.js';
import { runCliAsync } from '../fakes/run-cli.js';

const fake = (name: string): string => fileURLToPath(new URL(`../fakes/${name}`, import.meta.url));
const tiny = [
  '--concurrency',
  '1,2',
  '--input-len',
  '16',
  '--output-len',
  '8',
  '--rounds',
  '2',
  '--requests-per-round',
  '6',
];

let out: string;
beforeAll(async () => {
  out = await mkdtemp(join(tmpdir(), 'sb-new-engines-'));
});
afterAll(async () => {
  await rm(out, { recursive: true, force: true });
});

// Each run launches a stand-in engine and measures it: the limit is well above what a loaded machine needs.
describe('servebench run on the engines added as one module each', { timeout: 300_000 }, () => {
  it.each([
    ['trtllm', 'trtllm-serve.mjs', ['--max-seqs', '8', '--max-num-tokens', '4096']],
    ['lmdeploy', 'lmdeploy-serve.mjs', ['--max-seqs', '8', '--lmdeploy-backend', 'pytorch']],
  ])('%s: launched from its flags, measured, its engine metrics sampled', async (engine, file, flags) => {
    const dir = join(out, engine);
    const r = await runCliAsync([
      'run',
      '--engine',
      engine,
      '--python',
      fake(file),
      '--model',
      'org/tiny',
      ...flags,
      ...tiny,
      '--out',
      dir,
    ]);
    const [name] = await readdir(dir);
    const record = JSON.parse(await readFile(join(dir, name as string, 'run.json'), 'utf8')) as RunRecord;
    expect(record.status, r.stderr).toBe('completed');
    expect(record.simulated).toBe(false);
    expect(record.environment.engine).toMatchObject({ kind: engine, model: 'org/tiny' });
    expect(record.config.server).toMatchObject({ engine, maxSeqs: 8 });
    for (const level of record.levels) expect(level.failed).toBe(0);
    const telemetry = await readFile(join(dir, name as string, 'telemetry.jsonl'), 'utf8');
    expect(telemetry).toMatch(/"kind":"engine"/);
  });
});
