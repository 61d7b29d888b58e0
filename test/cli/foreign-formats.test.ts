import { spawnSync } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixtureDir } from '../core/report/fixtures.js';

const cli = new URL('../../bin/servebench.js', import.meta.url).pathname;
const root = new URL('../fixtures/', import.meta.url).pathname;
const run = (args: string[], cwd?: string) =>
  spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8', timeout: 120_000, cwd });

let tmp: string;
beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'sb-foreign-cli-'));
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

describe('servebench compare with other tools’ results', () => {
  it('--format table prints the terminal table to stdout: AIPerf beside a run, its ITL under its own name', () => {
    const aiperf = join(root, 'aiperf', 'servebench_sim-llama-8b-openai-chat-concurrency4');
    const r = run(['compare', fixtureDir('closed'), aiperf, '--format', 'table']);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^servebench compare: closed vs servebench_sim-llama-8b-openai-chat-concurrency4\n/);
    expect(r.stdout).toContain('how its figures were read');
    expect(r.stdout).toMatch(/\nAIPerf inter_token_latency p50 \(ms\) +— +10\.8 +— /);
    expect(r.stdout).toMatch(/\nTTFT p50 \(ms\) +29\.2 +28\.7 +0\.984× /);
  });

  it('--format-in forces the reader; a wrong one is refused in one line with exit 2', () => {
    const guidellm = join(root, 'guidellm', 'benchmarks.json');
    const ok = run([
      'compare',
      fixtureDir('closed'),
      guidellm,
      '--format-in',
      'guidellm',
      '--format',
      'md',
      '--out',
      '-',
    ]);
    expect(ok.status).toBe(0);
    expect(ok.stdout).toContain('converted exactly to servebench');
    const bad = run(['compare', fixtureDir('closed'), guidellm, '--format-in', 'inference-perf', '--format', 'md']);
    expect(bad.status).toBe(2);
    expect(bad.stderr.trim().split('\n')).toHaveLength(1);
    expect(bad.stderr).toMatch(
      /benchmarks\.json is not an inference-perf lifecycle report .*: found an object with keys metadata/,
    );
    const unknown = run(['compare', fixtureDir('closed'), guidellm, '--format-in', 'genai-perf']);
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toContain(
      '--format-in must be one of vllm, sglang, aiperf, guidellm, inference-perf, llmd-report',
    );
  });
});

describe('servebench report --format llmd-benchmark-report', () => {
  it('writes one Benchmark Report file per level into the --out folder (made when missing)', async () => {
    const out = join(tmp, 'reports', 'closed');
    const r = run(['report', fixtureDir('closed'), '--format', 'llmd-benchmark-report', '--out', out]);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toContain(`llmd-benchmark-report: 2 file(s) written to ${out}`);
    expect((await readdir(out)).sort()).toEqual([
      'benchmark_report_v0.2,_servebench_20261201T103727Z-closed_level0.yaml',
      'benchmark_report_v0.2,_servebench_20261201T103727Z-closed_level1.yaml',
    ]);
    // The folder compares with the run it came from: every figure alike.
    const c = run(['compare', fixtureDir('closed'), out, '--format', 'md', '--out', '-']);
    expect(c.status).toBe(0);
    expect(c.stdout).toContain("same definition as servebench's");
    expect(c.stdout).not.toContain('another figure');
  });
});
