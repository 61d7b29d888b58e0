import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runBenchmark } from '../../../src/core/benchmark.js';
import type { StartServer } from '../../../src/core/servers/types.js';
import { BenchConfigSchema } from '../../../src/shared/config.js';
import type { RunEvent } from '../../../src/shared/events.js';
import { attachedServer } from '../../fakes/attached-server.js';
import { closeAll, startSim, testProfile } from '../sim/helpers.js';

afterAll(closeAll);

let out: string;
beforeEach(async () => {
  out = await mkdtemp(join(tmpdir(), 'sb-progress-events-'));
});
afterEach(async () => {
  await rm(out, { recursive: true, force: true });
});

const simPerConfig: StartServer = async () => {
  const sim = await startSim({ profile: testProfile({ 'max-model-len': 4096 }), model: 'sim-model' });
  return attachedServer({ engine: 'attach', baseUrl: sim.url, model: 'sim-model', simulated: true }, () => sim.close());
};

describe('progress events of every phase of a run', () => {
  it('sends the start instant, the plan, each server configuration, prompt building as it goes and when each phase began', async () => {
    const events: RunEvent[] = [];
    const result = await runBenchmark(
      BenchConfigSchema.parse({
        out,
        label: 'phases',
        rounds: 2,
        requestsPerRound: 40,
        warmup: 2,
        concurrency: [1, 2],
        inputLen: [64],
        outputLen: [4],
        server: { engine: 'attach', url: 'http://127.0.0.1:9' },
        serverVariants: [{ extraArgs: ['--step-base-ms', '1'] }, { extraArgs: ['--step-base-ms', '1'] }],
      }),
      { startServer: simPerConfig, onEvent: (e) => events.push(e) },
    );
    const started = events.find((e) => e.type === 'run-started') as Extract<RunEvent, { type: 'run-started' }>;
    expect(started.startedAt).toBe(result.record.startedAt);
    expect(started.clockOriginWall).toBe(result.record.clock.originWall);
    // Two levels in each of two server configurations, each its warm-up and rounds.
    expect(started.plan).toEqual([
      { concurrency: 1, requests: 82, outputLen: 4 },
      { concurrency: 2, requests: 82, outputLen: 4 },
      { concurrency: 1, requests: 82, outputLen: 4 },
      { concurrency: 2, requests: 82, outputLen: 4 },
    ]);
    expect(events.filter((e) => e.type === 'server-config')).toEqual([
      { type: 'server-config', index: 0, total: 2 },
      { type: 'server-config', index: 1, total: 2 },
    ]);
    const phases = events.filter((e): e is Extract<RunEvent, { type: 'phase' }> => e.type === 'phase');
    expect(phases.every((p) => typeof p.atMs === 'number')).toBe(true);
    for (const levelIndex of [0, 1, 2, 3]) {
      const built = phases.filter((p) => p.levelIndex === levelIndex && p.phase === 'prompts').map((p) => p.done);
      expect(built[0]).toBe(0);
      expect(built.at(-1)).toBe(82);
      expect([...built].sort((a, b) => (a ?? 0) - (b ?? 0))).toEqual(built);
      // The pace is taken from the first send: no request of the level ends before it.
      const firstSend = phases.find((p) => p.levelIndex === levelIndex && p.phase === 'warmup')?.atMs as number;
      const firstEnd = events.find((e) => e.type === 'request-done' && e.levelIndex === levelIndex) as {
        endMs: number;
      };
      expect(firstSend).toBeLessThanOrEqual(firstEnd.endMs);
    }
  });
});
