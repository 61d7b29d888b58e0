import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { denoiseSteps, loadProfile } from '../../src/core/sim/index.js';
import { MAX_LAG_MS } from '../../src/core/sim/scheduler.js';
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
    // 0 or 1: the exit status also carries timing checks (round spread, client lag) that a loaded
    // machine may rightly fail; the checks this sweep is about are asserted below.
    expect([0, 1]).toContain(status);
    expect(record.status).toBe('completed');
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
      // a client stalled by a loaded machine may see a burst (warn); a server that does not stream fails
      expect(level.checks.find((c) => c.id === 'streaming')?.status).not.toBe('fail');
      expect(level.checks.find((c) => c.id === 'output-length')?.status).toBe('pass');
    }
  });

  it("runs each server with its threshold's denoising cost", () => {
    // Which cost each server ran with, in its own words (the speed that follows from it is the
    // step-time model's, checked in virtual time by test/core/sim/batching.test.ts).
    const p = loadProfile('h200-dllm-block');
    const steps = (t: number) => denoiseSteps(p.blockSize, t, p.denoiseExponent);
    expect(serverLog).toContain(`blocks at threshold 0.95 take ${steps(0.95)} denoising steps each`);
    expect(serverLog).toContain(`blocks at threshold 0.8 take ${steps(0.8)} denoising steps each`);
    expect(steps(0.8)).toBeLessThan(steps(0.95));
    // Causality, on any machine: step timers never fire early and the engine catches up at most
    // MAX_LAG_MS, so no request at 0.95 can end sooner than its blocks' denoising steps allow.
    const floorMs = (128 / p.blockSize) * steps(0.95) * p.stepBaseMs * (1 - p.jitter) - MAX_LAG_MS;
    const at095 = requests.filter((r) => !r.warmup && r.ok && record.levels[r.levelIndex]!.serverConfigIndex === 0);
    expect(at095.length).toBeGreaterThan(0);
    for (const r of at095) expect(r.endMs! - r.sendMs).toBeGreaterThanOrEqual(floorMs);
  });
});
