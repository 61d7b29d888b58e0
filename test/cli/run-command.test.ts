import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { benchConfigFromFlags, parseVary } from '../../src/cli/run-options.js';
import type { RunRecord } from '../../src/shared/run-record.js';
import { exitAgrees, failedBeyondMachine } from '../fakes/run-checks.js';

const cli = new URL('../../bin/servebench.js', import.meta.url).pathname;
// Generous bounds for a loaded or slow machine; the test's own limit is above the command's (spawnSync blocks).
const RUN_MS = 240_000;
const TEST_MS = RUN_MS + 60_000;
const run = (args: string[]) =>
  spawnSync(process.execPath, [cli, 'run', ...args], { encoding: 'utf8', timeout: RUN_MS });

let out: string;
beforeEach(async () => {
  out = await mkdtemp(join(tmpdir(), 'sb-cli-'));
});
afterEach(async () => {
  await rm(out, { recursive: true, force: true });
});

describe('servebench run flags and config', { timeout: TEST_MS }, () => {
  it('defaults to a demo that passes its own checks: concurrency 1,4,16, 512 in, 24 out, 3 rounds, warm-up on, simulator', () => {
    const c = benchConfigFromFlags({}, {});
    expect(c.concurrency).toEqual([1, 4, 16]);
    expect(c.inputLen).toEqual([512]);
    expect(c.outputLen).toEqual([24]);
    expect(c.rounds).toBe(3);
    expect(c.warmup).toBeUndefined();
    expect(c.server.engine).toBe('sim');
  });

  it('reads a YAML config with flag-style or camelCase keys, and flags win', async () => {
    const file = join(out, 'c.yaml');
    await writeFile(file, 'concurrency: "1,8"\ninput-len: 128\noutputLen: [64, 128]\nrounds: 5\nlabel: from-file\n');
    const c = benchConfigFromFlags({ config: file, rounds: '2' }, {});
    expect(c.concurrency).toEqual([1, 8]);
    expect(c.inputLen).toEqual([128]);
    expect(c.outputLen).toEqual([64, 128]);
    expect(c.rounds).toBe(2);
    expect(c.label).toBe('from-file');
  });

  it('takes the API key from the environment and attaches with --url', () => {
    const c = benchConfigFromFlags({ url: 'http://10.0.0.5:8000' }, { OPENAI_API_KEY: 'sk-test' });
    expect(c.apiKey).toBe('sk-test');
    expect(c.server.engine).toBe('attach');
    expect(c.server.url).toBe('http://10.0.0.5:8000');
  });

  it('loads a --preset as the base of the server config, flags over it', () => {
    const c = benchConfigFromFlags({ preset: 'llama-3.1-8b-vllm-bf16', 'max-seqs': '32' }, {});
    expect(c.server.engine).toBe('vllm');
    expect(c.server.model).toMatch(/Llama-3\.1-8B/i);
    expect(c.server.maxSeqs).toBe(32);
  });

  it('refuses an unknown --preset or --sim-profile in one line listing the real names', () => {
    expect(() => benchConfigFromFlags({ preset: 'nope' }, {})).toThrow(
      /unknown --preset 'nope'; available: .*sim-demo/,
    );
    expect(() => benchConfigFromFlags({ 'sim-profile': 'nope' }, {})).toThrow(
      /unknown --sim-profile 'nope'; available: .*instant/,
    );
  });

  it('expands --vary into a server sweep', () => {
    expect(parseVary(['threshold=0.95,0.9', 'quantization=fp8,awq'])).toEqual([
      { diffusion: { threshold: 0.95 }, quantization: 'fp8' },
      { diffusion: { threshold: 0.95 }, quantization: 'awq' },
      { diffusion: { threshold: 0.9 }, quantization: 'fp8' },
      { diffusion: { threshold: 0.9 }, quantization: 'awq' },
    ]);
  });

  it.each([
    [['--concurrency', '1,x'], /--concurrency must be a comma-separated list/],
    [['--bogus'], /Unknown option '--bogus'/],
    [['--utilization', '60'], /--utilization must be a number in \(0, 1\]/],
    [['--api', 'images'], /--api must be chat, completions, messages, responses, embeddings, rerank or score/],
    [['--vary', 'colour=red'], /--vary must be KEY=V1,V2/],
    [['--rate', '2', '--concurrency', '4'], /use --max-concurrency/],
    [['--config', '/nonexistent/x.yaml'], /cannot read --config/],
  ])('rejects %j with one line and exit 2', (args, message) => {
    const res = run(args as string[]);
    expect(res.status).toBe(2);
    expect(res.stderr.trim().split('\n')).toHaveLength(1);
    expect(res.stderr).toMatch(message as RegExp);
  });

  it('says that nothing answers at --url, exit 2, and records the failure', async () => {
    const res = run(['--url', 'http://127.0.0.1:9', '--out', out]);
    expect(res.status).toBe(2);
    expect(res.stderr).toMatch(/nothing answers at http:\/\/127\.0\.0\.1:9/);
    const [dir] = await readdir(out);
    const record = JSON.parse(await readFile(join(out, dir as string, 'run.json'), 'utf8')) as RunRecord;
    expect(record.status).toBe('failed');
  });

  it('keeps secrets out of the run folder and the output', async () => {
    const res = run([
      '--concurrency',
      '1',
      '--input-len',
      '32',
      '--output-len',
      '8',
      '--rounds',
      '1',
      '--requests-per-round',
      '8',
      '--out',
      out,
      '--api-key',
      'sk-secret123',
      '--env',
      'HF_TOKEN=hf_secret456',
    ]);
    const [dir] = await readdir(out);
    const record = JSON.parse(await readFile(join(out, dir as string, 'run.json'), 'utf8')) as RunRecord;
    expect(record.status).toBe('completed');
    expect(failedBeyondMachine(record)).toEqual([]);
    expect(exitAgrees(res.status, record)).toBe(true);
    expect(res.stdout + res.stderr).not.toMatch(/sk-secret123|hf_secret456/);
    for (const file of await readdir(join(out, dir as string))) {
      expect(await readFile(join(out, dir as string, file), 'utf8'), file).not.toMatch(/sk-secret123|hf_secret456/);
    }
  });

  it('runs a small sweep on the simulator and prints the table and the run folder', async () => {
    const res = run([
      '--concurrency',
      '1,4',
      '--input-len',
      '32',
      '--output-len',
      '16',
      '--rounds',
      '2',
      '--requests-per-round',
      '8',
      '--out',
      out,
      '--label',
      'demo',
      '--gpu-price-per-hour',
      '2',
    ]);
    expect(res.stdout).toMatch(/SIMULATED/);
    expect(res.stdout).toMatch(/conc\s+offered\s+out tok\/s\s+TTFT p50/);
    expect(res.stdout).toMatch(/\$\/1M out/);
    expect(res.stdout).toMatch(/run folder: .*-demo/);
    const [dir] = await readdir(out);
    const record = JSON.parse(await readFile(join(out, dir as string, 'run.json'), 'utf8')) as RunRecord;
    expect(failedBeyondMachine(record)).toEqual([]);
    expect(exitAgrees(res.status, record)).toBe(true);
    const files = await readdir(join(out, dir as string));
    expect(files).toEqual(expect.arrayContaining(['run.json', 'requests.jsonl', 'summary.csv', 'server.log']));
  });
});
