import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunRecord } from '../../src/shared/run-record.js';
import { runCliAsync, type CliResult } from '../fakes/run-cli.js';

// Three `servebench run --distributed` processes on this machine, ranks by flag (any launcher), rank 0 launching the
// simulator: the live merge against `servebench merge` of the shards, and rank 0 killed mid-level.

const cli = new URL('../../bin/servebench.js', import.meta.url).pathname;

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const a = s.address();
      s.close(() => resolve(typeof a === 'object' && a ? a.port : 0));
    });
  });
}

function start(args: string[]): { child: ChildProcess; done: Promise<CliResult> } {
  const child = spawn(process.execPath, [cli, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const done = new Promise<CliResult>((resolve) => child.on('close', (status) => resolve({ status, stdout, stderr })));
  return { child, done };
}

async function ranks(out: string, load: string[]): Promise<Array<{ child: ChildProcess; done: Promise<CliResult> }>> {
  const port = await freePort();
  const flags = (r: number): string[] => [
    'run',
    '--distributed',
    '--rank',
    String(r),
    '--world-size',
    '3',
    '--coordinator',
    `127.0.0.1:${port}`,
    '--barrier-timeout',
    '60',
    ...load,
    '--out',
    out,
  ];
  return [start(flags(1)), start(flags(2)), start(flags(0))];
}

const folder = async (out: string): Promise<string> =>
  join(out, (await readdir(out)).find((d) => /^\d{8}T/.test(d)) as string);
const record = async (dir: string): Promise<RunRecord> =>
  JSON.parse(await readFile(join(dir, 'run.json'), 'utf8')) as RunRecord;

describe('servebench run --distributed, three processes by flag', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'sb-dist-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('writes one run that servebench merge rebuilds from the shards to the same figures', async () => {
    const out = join(dir, 'live');
    const procs = await ranks(out, [
      '--concurrency',
      '3,9',
      '--input-len',
      '32',
      '--output-len',
      '8',
      '--rounds',
      '2',
      '--requests-per-round',
      '36',
    ]);
    const results = await Promise.all(procs.map((p) => p.done));
    expect(results[2]!.stdout).toContain('load generators');
    const live = await record(await folder(out));
    expect(live.status).toBe('completed');
    expect(live.levels.map((l) => l.workers?.map((w) => w.concurrency))).toEqual([
      [1, 1, 1],
      [3, 3, 3],
    ]);
    const merged = await runCliAsync(['merge', await folder(out), '--out', join(dir, 'merged')]);
    expect(merged.status === 0 || merged.status === 1, merged.stderr).toBe(true);
    const again = await record(await folder(join(dir, 'merged')));
    expect(again.levels.map((l) => [l.completed, l.ttftMs.p95, l.e2eMs.p50, l.outputTokPerSec])).toEqual(
      live.levels.map((l) => [l.completed, l.ttftMs.p95, l.e2eMs.p50, l.outputTokPerSec]),
    );
    expect(again.distributed?.role).toBe('merged');
  }, 300_000);

  it('stops every worker, saying why, when rank 0 is killed mid-level', async () => {
    const out = join(dir, 'killed');
    const procs = await ranks(out, [
      '--concurrency',
      '6',
      '--input-len',
      '32',
      '--output-len',
      '48',
      '--rounds',
      '3',
      '--requests-per-round',
      '240',
    ]);
    const shard = async (): Promise<string> => {
      const root = existsSync(out) ? await folder(out).catch(() => '') : '';
      return root ? readFile(join(root, 'shards', 'rank-1', 'requests.jsonl'), 'utf8').catch(() => '') : '';
    };
    while (!(await shard()).includes('"round":0')) await new Promise((r) => setTimeout(r, 200));
    procs[2]!.child.kill('SIGKILL');
    const [w1, w2] = await Promise.all([procs[0]!.done, procs[1]!.done]);
    for (const w of [w1!, w2!]) {
      expect(w.status).toBe(1);
      expect(w.stderr).toMatch(/rank 0 at 127\.0\.0\.1:\d+ was lost/);
    }
    const shardRecord = await record(join(await folder(out), 'shards', 'rank-1'));
    expect(shardRecord.status).toBe('failed');
    expect(
      shardRecord.levels[0]?.partial,
      JSON.stringify({ error: shardRecord.error, messages: shardRecord.messages, w1: w1!.stderr.slice(-2000) }),
    ).toBe(true);
  }, 300_000);
});
