import { describe, expect, it } from 'vitest';
import type { LevelMeasureInput } from '../../../src/core/run/level-measure.js';
import { barrierStart, configDigest } from '../../../src/core/distributed/worker.js';
import { CoordinatorLostError } from '../../../src/core/distributed/worker-link.js';
import { BenchConfigSchema } from '../../../src/shared/config.js';

const input = (now: number) => ({ clock: { originMonoNs: 0n, nowMs: () => now } }) as unknown as LevelMeasureInput;

describe('a worker at a barrier', () => {
  it("starts at rank 0's instant mapped onto its own clock, and says how late it was", async () => {
    const signal = new AbortController().signal;
    // rank0 = local + 100: rank 0's instant 1000 is 900 here; at 950 the worker is 50 ms late and goes at once.
    expect(await barrierStart(async () => 1000, input(950), 100, signal)).toBe(50);
    expect(await barrierStart(async () => 1000, input(900), 100, signal)).toBe(0);
  });

  it('ends its wait when rank 0 is lost there, so the level keeps what it measured', async () => {
    const lost = (): Promise<number> => Promise.reject(new CoordinatorLostError('rank 0 at n1:1 was lost'));
    expect(await barrierStart(lost, input(0), 0, new AbortController().signal)).toBe(0);
  });
});

describe('configDigest', () => {
  it('is the same for the same settings and differs for others, never showing a secret', () => {
    const a = BenchConfigSchema.parse({ concurrency: [4], apiKey: 'sk-one' });
    expect(configDigest(a)).toBe(configDigest(BenchConfigSchema.parse({ concurrency: [4], apiKey: 'sk-one' })));
    expect(configDigest(a)).not.toBe(configDigest(BenchConfigSchema.parse({ concurrency: [8] })));
    expect(configDigest(a)).not.toContain('sk-one');
  });
});
