import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ActiveRuns, runBenchmark } from '../../../src/core/benchmark.js';
import { loadProfile } from '../../../src/core/sim/index.js';
import { attachTo } from '../../fakes/attached-server.js';
import { BenchConfigSchema } from '../../../src/shared/config.js';
import type { RunRecord } from '../../../src/shared/run-record.js';
import { closeAll, startSim } from '../sim/helpers.js';

afterAll(closeAll);

const attach = (url: string) => attachTo(url);

describe('ActiveRuns: the runs a host has in progress, for a forced exit', () => {
  it("marks its own run cancelled on disk at once, leaves other hosts' runs alone, and forgets a finished run", async () => {
    const sim = await startSim({ profile: loadProfile('instant'), model: 'sim-model' });
    const out = await mkdtemp(join(tmpdir(), 'sb-active-'));
    try {
      const config = BenchConfigSchema.parse({
        out,
        label: 'active',
        concurrency: [1],
        rounds: 1,
        requestsPerRound: 2,
        warmup: 0,
        inputLen: [8],
        outputLen: [4],
        server: { engine: 'attach', url: sim.url },
      });
      const mine = new ActiveRuns();
      const other = new ActiveRuns();
      let dir = '';
      const seen: Array<Pick<RunRecord, 'status' | 'error'>> = [];
      const onDisk = (): RunRecord => JSON.parse(readFileSync(join(dir, 'run.json'), 'utf8')) as RunRecord;
      const result = await runBenchmark(config, {
        startServer: attach(sim.url),
        activeRuns: mine,
        onEvent: (e) => {
          if (e.type === 'run-started') dir = e.dir;
          if (e.type !== 'level-started') return;
          // Another host's registry knows nothing of this run: no module state is shared.
          other.saveSync('not mine');
          seen.push({ status: onDisk().status, error: onDisk().error });
          mine.saveSync('forced exit (second Ctrl-C)');
          seen.push({ status: onDisk().status, error: onDisk().error });
        },
      });
      expect(seen).toEqual([
        { status: 'running', error: undefined },
        { status: 'cancelled', error: 'forced exit (second Ctrl-C)' },
      ]);
      // The process did not exit here, so the run went on and its end is what run.json says now.
      expect(result.record.status).toBe('completed');
      mine.saveSync('too late');
      expect(onDisk().status).toBe('completed');
    } finally {
      await rm(out, { recursive: true, force: true });
    }
  }, 60_000);
});
