import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hostBusy } from '../../src/core/telemetry/host-pressure.js';
import type { RequestRecord } from '../../src/shared/request-record.js';
import type { RunRecord, Summary } from '../../src/shared/run-record.js';
import { slurmUnavailable, startSlurmCluster, type SlurmCluster } from './slurm-cluster.js';
import { exitAgrees, failedBeyondMachine } from '../fakes/run-checks.js';
import { runCliAsync } from '../fakes/run-cli.js';
import { startSimProcess } from '../../bench/sim-process.js';

// servebench run --distributed under a real Slurm (slurmctld and three slurmd on loopback), against the simulator. Skips where Slurm is not installed, saying why.

const cli = new URL('../../bin/servebench.js', import.meta.url).pathname;
const unavailable = slurmUnavailable();
// Open loop: three Poisson processes at a third of the rate each are one Poisson process at the rate, so the merged
// run and one process see the same arrivals in law (each request's wait for the simulator's next step is random).
const LOAD = [
  '--rate',
  '20',
  '--input-len',
  '64',
  '--output-len',
  '16',
  '--rounds',
  '2',
  '--requests-per-round',
  '180',
];

async function runFolder(out: string): Promise<string> {
  const name = (await readdir(out)).find((d) => /^\d{8}T/.test(d));
  return join(out, name as string);
}

async function lines(file: string): Promise<RequestRecord[]> {
  const text = await readFile(file, 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as RequestRecord);
}

const overlap = (a: Summary, b: Summary, key: 'p95Ci'): boolean => {
  const x = a[key];
  const y = b[key];
  return x !== null && y !== null && x[0] <= y[1] && y[0] <= x[1];
};

/** Runs a command with the cluster's config, without blocking this process. */
function slurmAsync(
  cluster: SlurmCluster,
  cmd: string,
  args: string[],
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { env: cluster.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

describe.skipIf(unavailable !== null)(
  `servebench run --distributed on a real Slurm cluster${unavailable ? ` (skipped: ${unavailable})` : ''}`,
  () => {
    let dir: string;
    let cluster: SlurmCluster;

    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'sb-slurm-'));
      cluster = await startSlurmCluster(dir);
    }, 120_000);
    afterAll(async () => {
      await cluster?.stop();
      await rm(dir, { recursive: true, force: true });
    }, 60_000);

    it("splits one run over srun -N 3, merges every worker's records on rank 0's clock, and agrees with one process", async () => {
      const out = join(dir, 'runs');
      // Both runs measure one simulator, one after the other: the same server at the same total concurrency. Its steps
      // are long beside a busy machine's scheduling noise, and its fake GPU does not heat (no throttling in the second).
      const sim = await startSimProcess(['--step-base-ms', '20', '--gpu-heat-rate', '0']);
      const single = await runCliAsync(['run', '--url', sim.url, ...LOAD, '--out', join(dir, 'single')]);
      const srun = await slurmAsync(cluster, 'srun', [
        '-N',
        '3',
        '--ntasks-per-node',
        '1',
        '-l',
        process.execPath,
        cli,
        'run',
        '--distributed',
        '--barrier-timeout',
        '60',
        '--url',
        sim.url,
        ...LOAD,
        '--out',
        out,
      ]);
      await sim.stop();
      const folder = await runFolder(out);
      const record = JSON.parse(await readFile(join(folder, 'run.json'), 'utf8')) as RunRecord;
      expect(record.status, `${srun.stdout}\n${srun.stderr}`).toBe('completed');
      expect(record.distributed?.worldSize).toBe(3);
      expect(record.distributed?.launcher).toBe('slurm');
      expect(record.distributed?.workers.map((w) => w.host)).toEqual(['n1', 'n2', 'n3']);
      const merged = await lines(join(folder, 'requests.jsonl'));
      const shards = await Promise.all(
        [0, 1, 2].map((r) => lines(join(folder, 'shards', `rank-${r}`, 'requests.jsonl'))),
      );
      // Every worker's requests are there exactly once, and carry their worker.
      expect(merged.length).toBe(shards.reduce((s, x) => s + x.length, 0));
      expect(new Set(merged.map((r) => r.requestTag)).size).toBe(merged.length);
      for (const [rank, shard] of shards.entries()) {
        expect(shard.length).toBeGreaterThan(0);
        expect(
          merged
            .filter((r) => r.worker === rank)
            .map((r) => r.id)
            .sort((a, b) => a - b),
        ).toEqual(shard.map((r) => r.id).sort((a, b) => a - b));
      }
      const level = record.levels[0]!;
      expect(level.completed).toBe(2 * 180);
      expect(level.workers?.map((w) => w.rate)).toEqual([20 / 3, 20 / 3, 20 / 3]);
      // On one machine the clocks share CLOCK_MONOTONIC: the true offset is the difference of the clock origins.
      for (const rank of [1, 2]) {
        const shard = JSON.parse(
          await readFile(join(folder, 'shards', `rank-${rank}`, 'run.json'), 'utf8'),
        ) as RunRecord;
        const truth = Number(BigInt(shard.clock.originMonoNs) - BigInt(record.clock.originMonoNs)) / 1e6;
        const w = level.workers!.find((x) => x.rank === rank)!;
        expect(Math.abs((w.offsetMs as number) - truth)).toBeLessThanOrEqual((w.uncertaintyMs as number) + 0.001);
      }
      expect(single.status === 0 || single.status === 1, single.stderr).toBe(true);
      const one = JSON.parse(
        await readFile(join(await runFolder(join(dir, 'single')), 'run.json'), 'utf8'),
      ) as RunRecord;
      const l1 = one.levels[0]!;
      // Merging maps each worker's times onto rank 0's clock: every request keeps its own TTFT and E2E.
      const shardOf = new Map(shards.flat().map((r) => [r.requestTag, r]));
      for (const r of merged.filter((x) => x.ok)) {
        const s = shardOf.get(r.requestTag)!;
        expect(r.firstTokenMs! - r.sendMs).toBeCloseTo(s.firstTokenMs! - s.sendMs, 6);
        expect(r.endMs! - r.sendMs).toBeCloseTo(s.endMs! - s.sendMs, 6);
      }
      // In law the merged run and one process see the same latencies; only a host idle through both runs owes it (a
      // busy one, as under test:slowed, gives the two runs different machines).
      if (hostBusy(level.hostPressure) === false && hostBusy(l1.hostPressure) === false) {
        expect(
          overlap(level.ttftMs, l1.ttftMs, 'p95Ci'),
          `TTFT p95 ${JSON.stringify(level.ttftMs.p95Ci)} vs ${JSON.stringify(l1.ttftMs.p95Ci)}`,
        ).toBe(true);
        expect(
          overlap(level.e2eMs, l1.e2eMs, 'p95Ci'),
          `E2E p95 ${JSON.stringify(level.e2eMs.p95Ci)} vs ${JSON.stringify(l1.e2eMs.p95Ci)}`,
        ).toBe(true);
      }
    }, 600_000);

    it('runs the sbatch script that servebench slurm prints', async () => {
      const out = join(dir, 'sbatch');
      const script = await runCliAsync([
        'slurm',
        '--nodes',
        '3',
        '--job-name',
        'sbscript',
        '--',
        'run',
        '--concurrency',
        '6',
        '--input-len',
        '32',
        '--output-len',
        '8',
        '--rounds',
        '1',
        '--requests-per-round',
        '30',
        '--out',
        out,
      ]);
      expect(script.status, script.stderr).toBe(0);
      // The script calls `servebench`: a shim on PATH stands for the installed command.
      const bin = join(dir, 'bin');
      await mkdir(bin, { recursive: true });
      await writeFile(join(bin, 'servebench'), `#!/bin/sh\nexec ${process.execPath} ${cli} "$@"\n`, { mode: 0o755 });
      await writeFile(join(dir, 'job.sh'), script.stdout);
      const env = { ...cluster.env, PATH: `${bin}:${process.env.PATH ?? ''}` };
      const job = await new Promise<number | null>((resolve) => {
        spawn('sbatch', ['--wait', '-o', join(dir, 'job.out'), join(dir, 'job.sh')], { env, stdio: 'ignore' }).on(
          'close',
          resolve,
        );
      });
      const record = JSON.parse(await readFile(join(await runFolder(out), 'run.json'), 'utf8')) as RunRecord;
      // Three clients and the simulator on a loaded machine may fail the client check (exit 1); nothing else may.
      expect(exitAgrees(job, record), await readFile(join(dir, 'job.out'), 'utf8').catch(() => '')).toBe(true);
      expect(failedBeyondMachine(record)).toEqual([]);
      expect(record.status).toBe('completed');
      expect(record.levels[0]?.workers?.map((w) => w.host)).toEqual(['n1', 'n2', 'n3']);
    }, 300_000);

    it('cuts the level short, names the worker and exits non-zero when scancel stops a worker mid-level', async () => {
      const out = join(dir, 'cancel');
      const alloc = cluster.run('salloc', ['-N', '3', '--no-shell', '-J', 'sbcancel']);
      const job = /allocation (\d+)/.exec(alloc.stderr + alloc.stdout)?.[1];
      expect(job, alloc.stderr).toBeDefined();
      // Rank 0 listens on a port of this job's own; each worker is its own job step, so scancel can stop one alone.
      const coordinator = `n1:${20_000 + (Number(job) % 10_000) + 17}`;
      const withPort = (rank: number): string[] => [
        '--jobid',
        job!,
        '-N1',
        '-n1',
        '-w',
        `n${rank + 1}`,
        '--overlap',
        '-J',
        `rank${rank}`,
        process.execPath,
        cli,
        'run',
        '--distributed',
        '--rank',
        String(rank),
        '--world-size',
        '3',
        '--coordinator',
        coordinator,
      ];
      const load = [
        '--barrier-timeout',
        '60',
        '--concurrency',
        '6',
        '--input-len',
        '64',
        '--output-len',
        '48',
        '--rounds',
        '3',
        '--requests-per-round',
        '240',
        '--out',
        out,
      ];
      const workers = [1, 2].map((r) => slurmAsync(cluster, 'srun', [...withPort(r), ...load]));
      const rank0 = slurmAsync(cluster, 'srun', [...withPort(0), ...load]);
      // Once worker 2 has finished (and sent) its round 0, stop its step: the level is in its second round.
      const deadline = Date.now() + 300_000;
      let step: string | undefined;
      for (;;) {
        const root = existsSync(out) ? await runFolder(out).catch(() => undefined) : undefined;
        const own = root ? await lines(join(root, 'shards', 'rank-2', 'requests.jsonl')) : [];
        if (own.some((r) => r.round === 0)) {
          step = cluster
            .run('squeue', ['-s', '-h', '-o', '%i %j'])
            .stdout.split('\n')
            .find((l) => l.endsWith(' rank2'))
            ?.split(' ')[0];
          break;
        }
        if (Date.now() > deadline) throw new Error('round 0 never finished');
        await new Promise((r) => setTimeout(r, 200));
      }
      expect(step).toBeDefined();
      cluster.run('scancel', [step!]);
      const r0 = await rank0;
      await Promise.all(workers);
      cluster.run('scancel', [job!]);
      expect(r0.status).not.toBe(0);
      const record = JSON.parse(await readFile(join(await runFolder(out), 'run.json'), 'utf8')) as RunRecord;
      expect(record.status).toBe('failed');
      expect(record.error).toMatch(/worker 2 \(n3\) was lost/);
      const level = record.levels[0]!;
      expect(level.partial).toBe(true);
      expect(level.cutShort).toMatch(/worker 2 \(n3\) was lost/);
      expect(level.checks.find((c) => c.id === 'cut-short')?.status).toBe('fail');
      // What worker 2 measured before it was stopped is kept: its round 0.
      const merged = await lines(join(await runFolder(out), 'requests.jsonl'));
      expect(merged.filter((r) => r.worker === 2 && r.round === 0).length).toBe(80);
    }, 600_000);
  },
);
