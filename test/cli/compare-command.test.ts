import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURE_SECRETS, fixtureDir } from '../core/report/fixtures.js';

const cli = new URL('../../bin/servebench.js', import.meta.url).pathname;
const fixtures = new URL('../fixtures/compare/', import.meta.url).pathname;
const run = (args: string[], cwd?: string) =>
  spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8', timeout: 120_000, cwd });

let tmp: string;
beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'sb-compare-cli-'));
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

describe('servebench compare', () => {
  it('puts a run folder beside its own vllm-json export: Markdown to stdout with --out -', async () => {
    const file = join(tmp, 'closed.vllm.jsonl');
    expect(run(['report', fixtureDir('closed'), '--format', 'vllm-json', '--out', file]).status).toBe(0);
    const r = run(['compare', fixtureDir('closed'), file, '--format', 'md', '--out', '-']);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^# servebench compare: closed vs closed\.vllm/);
    expect(r.stdout).toContain('closed.vllm against closed: like for like');
    expect(r.stdout).not.toMatch(/\| (faster|slower) \|/);
    // The closed run was given an API key and an HF token: neither reaches a comparison.
    for (const secret of FIXTURE_SECRETS) expect(r.stdout).not.toContain(secret);
    // Seeded: the same command gives the same bytes; another seed other intervals.
    expect(run(['compare', fixtureDir('closed'), file, '--format', 'md', '--out', '-']).stdout).toBe(r.stdout);
    const other = run(['compare', fixtureDir('closed'), file, '--format', 'md', '--out', '-', '--seed', '7']);
    expect(other.stdout).not.toBe(r.stdout);
  });

  it('writes compare.html in the current folder by default, from a vLLM and an SGLang file', async () => {
    const r = run(['compare', join(fixtures, 'vllm-detailed.json'), join(fixtures, 'sglang.jsonl')], tmp);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain(
      `html comparison of 2 series (2 matching levels) written to ${join(tmp, 'compare.html')}`,
    );
    const html = await readFile(join(tmp, 'compare.html'), 'utf8');
    expect(html).toMatch(/^<!doctype html>/);
    expect(html).toContain('sglang bench_serving wrote summaries only');
    expect(html).not.toMatch(/(src|href)="https?:/);
  });

  it('reads the file of report --format json: a run beside its own export, ratios of 1 and no verdicts', async () => {
    const file = join(tmp, 'closed-export.json');
    expect(run(['report', fixtureDir('closed'), '--format', 'json', '--out', file]).status).toBe(0);
    const r = run(['compare', fixtureDir('closed'), file, '--format', 'md', '--out', '-']);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/report json export/);
    expect(r.stdout).toContain('closed (closed-export.json) against closed: like for like');
    expect(r.stdout).not.toMatch(/\| (faster|slower) \|/);
  });

  it('refuses one plain run, a bad format, a bad seed and a foreign file with one line and exit 2', async () => {
    const junk = join(tmp, 'junk.json');
    await writeFile(junk, '{"rows": []}');
    const cases: Array<[string[], RegExp]> = [
      [['compare', fixtureDir('closed')], /give two or more run folders or result files/],
      [['compare', fixtureDir('closed'), fixtureDir('open'), '--format', 'pdf'], /--format must be one of html, md/],
      [['compare', fixtureDir('closed'), fixtureDir('open'), '--seed', '1.5'], /--seed must be a whole number/],
      [
        ['compare', fixtureDir('closed'), junk],
        /is no file compare knows .*give a run folder, a servebench report --format json file, a vllm/,
      ],
    ];
    for (const [args, message] of cases) {
      const r = run(args);
      expect(r.status, args.join(' ')).toBe(2);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toMatch(message);
    }
  });

  it('is listed in the help', () => {
    expect(run(['--help']).stdout).toMatch(/compare +put runs and vllm\/sglang result files side by side/);
    expect(run(['compare', '--help']).stdout).toContain('--save-detailed');
  });
});
