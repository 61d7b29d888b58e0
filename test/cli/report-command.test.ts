import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixtureCopy } from '../core/report/fixtures.js';

const cli = new URL('../../bin/servebench.js', import.meta.url).pathname;
const report = (args: string[]) =>
  spawnSync(process.execPath, [cli, 'report', ...args], { encoding: 'utf8', timeout: 120_000 });

let dir: string;
beforeAll(async () => {
  dir = await fixtureCopy('sweep');
});
afterAll(async () => {
  await rm(dirname(dir), { recursive: true, force: true });
});

// Each command may take up to 120 s on a slow machine, and a test runs several: the test's limit is above their sum.
describe('servebench report', { timeout: 600_000 }, () => {
  it('writes the HTML report into the run folder by default', async () => {
    const r = report([dir]);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain(`html report written to ${join(dir, 'report.html')}`);
    expect(await readFile(join(dir, 'report.html'), 'utf8')).toMatch(/^<!doctype html>/);
  });

  it('writes a text format to stdout with --out -, and to a named file with --out FILE', async () => {
    const md = report([dir, '--format', 'md', '--out', '-']);
    expect(md.status).toBe(0);
    expect(md.stdout).toMatch(/^# servebench report: sweep \(SIMULATED\)/);
    const file = join(dirname(dir), 'levels.jsonl');
    const v = report([dir, '--format', 'vllm-json', '--out', file]);
    expect(v.status).toBe(0);
    expect((await readFile(file, 'utf8')).trim().split('\n')).toHaveLength(4);
  });

  it('refuses a bad format, a missing folder, pdf to stdout and a newer run.json with one line and exit 2', async () => {
    const bad = report([dir, '--format', 'docx']);
    expect(bad.status).toBe(2);
    expect(bad.stderr.trim()).toBe(
      "servebench report: --format must be one of html, pdf, md, csv, json, vllm-json, llmd-benchmark-report (got 'docx')",
    );
    const missing = report(['/nonexistent/run']);
    expect(missing.status).toBe(2);
    expect(missing.stderr.trim().split('\n')).toHaveLength(1);
    expect(report([dir, '--format', 'pdf', '--out', '-']).stderr).toMatch(/--out - writes text formats only/);
    expect(report([]).status).toBe(2);
    const newer = await fixtureCopy('open');
    const record = JSON.parse(await readFile(join(newer, 'run.json'), 'utf8'));
    await writeFile(join(newer, 'run.json'), JSON.stringify({ ...record, schemaVersion: 3 }));
    const r = report([newer]);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/schemaVersion 3, written by a newer servebench .*: update servebench to read it/);
    await rm(dirname(newer), { recursive: true, force: true });
  });

  it.skipIf(!existsSync('/usr/bin/chromium'))('prints a PDF with Debian chromium', async () => {
    const file = join(dirname(dir), 'r.pdf');
    const r = report([dir, '--format', 'pdf', '--out', file]);
    expect(r.status).toBe(0);
    expect((await readFile(file)).subarray(0, 5).toString()).toBe('%PDF-');
  });

  it('lists every format in its help, and servebench --help lists the command', () => {
    const help = report(['--help']);
    expect(help.status).toBe(0);
    for (const f of ['html', 'pdf', 'md', 'csv', 'json', 'vllm-json']) expect(help.stdout).toContain(f);
    const main = spawnSync(process.execPath, [cli, '--help'], { encoding: 'utf8' });
    expect(main.stdout).toMatch(/report +render a run folder/);
  });
});
