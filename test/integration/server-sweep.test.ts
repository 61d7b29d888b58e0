import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RequestRecord } from '../../src/shared/request-record.js';
import type { RunRecord } from '../../src/shared/run-record.js';

const cli = new URL('../../bin/servebench.js', import.meta.url).pathname;

describe('a server sweep over a diffusion threshold on the simulated block-diffusion model', () => {
  let out: string;
  let record: RunRecord;
  let requests: RequestRecord[];
  let serverLog: string;
  let status: number | null;

  beforeAll(async () => {
    out = await mkdtemp(join(tmpdir(), 'sb-sweep-'));
    const res = spawnSync(
      process.execPath,
      [
        cli,
        'run',
        '--sim-profile',
        'h200-dllm-block',
        '--vary',
        'threshold=0.95,0.8',
        '--concurrency',
        '1,4',
        '--input-len',
        '64',
        '--output-len',
        '128',
        '--rounds',
        '2',
        '--requests-per-round',
        '8',
        '--out',
        out,
        '--label',
        'sweep',
      ],
      { encoding: 'utf8', timeout: 240_000 },
    );
    status = res.status;
    const dir = join(out, (await readdir(out))[0] as string);
    record = JSON.parse(await readFile(join(dir, 'run.json'), 'utf8')) as RunRecord;
    requests = (await readFile(join(dir, 'requests.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as RequestRecord);
    serverLog = await readFile(join(dir, 'server.log'), 'utf8');
  }, 300_000);
  afterAll(async () => {
    await rm(out, { recursive: true, force: true });
  });

  it('restarts the server per configuration and labels every level with it', () => {
    expect(status).toBe(0);
    expect(record.levels.map((l) => [l.serverConfigIndex, l.concurrency])).toEqual([
      [0, 1],
      [0, 4],
      [1, 1],
      [1, 4],
    ]);
    expect(record.levels[0]?.serverVariant).toEqual({ 'diffusion.threshold': 0.95 });
    expect(record.levels[2]?.serverVariant).toEqual({ 'diffusion.threshold': 0.8 });
    expect(serverLog).toMatch(/--threshold 0\.95/);
    expect(serverLog).toMatch(/--threshold 0\.8/);
  });

  it('sees whole blocks per chunk, counted by the server, and still passes the streaming check', () => {
    const measured = requests.filter((r) => !r.warmup && r.ok);
    expect(measured.every((r) => r.chunkTokensSource === 'server' && r.chunks.every(([, n]) => n === 32))).toBe(true);
    for (const level of record.levels) {
      expect(level.tokensPerChunk.p50).toBe(32);
      expect(level.checks.find((c) => c.id === 'streaming')?.status).toBe('pass');
      expect(level.checks.find((c) => c.id === 'output-length')?.status).toBe('pass');
    }
  });

  it('decodes faster at the lower threshold (fewer denoising steps per block)', () => {
    const at = (i: number) => record.levels[i]!.itlMs.p50!;
    expect(at(2)).toBeLessThan(at(0));
    expect(at(3)).toBeLessThan(at(1));
  });
});
