import { describe, expect, it } from 'vitest';
import { mapParallel } from '../../../src/core/workloads/level-input.js';

describe("mapParallel (a level's workload prompts, counted with the server)", () => {
  it('keeps index order, and starts no index once the level is cancelled', async () => {
    expect(await mapParallel({ count: 5, parallel: 2 }, async (i) => i * 10)).toEqual([0, 10, 20, 30, 40]);
    const abort = new AbortController();
    const started: number[] = [];
    await mapParallel({ count: 1000, parallel: 4, signal: abort.signal }, async (i) => {
      started.push(i);
      if (i === 9) abort.abort();
      return i;
    });
    // The four lanes each finish the index they hold; nothing past them starts.
    expect(started.length).toBeLessThanOrEqual(10 + 3);
    expect(started).toContain(9);
  });

  it('leaves a hole where the cancel cut an index short, and fails on any other error', async () => {
    const abort = new AbortController();
    const out = await mapParallel({ count: 3, parallel: 3, signal: abort.signal }, async (i) => {
      if (i !== 1) return i;
      // Cancelled while its count was out (every lane had started its index by then).
      await Promise.resolve();
      abort.abort();
      throw new Error('cancelled');
    });
    expect([out[0], out[1], out[2]]).toEqual([0, undefined, 2]);
    await expect(
      mapParallel({ count: 3, parallel: 3 }, async (i) => {
        if (i === 1) throw new Error('server said no');
        return i;
      }),
    ).rejects.toThrow('server said no');
  });
});
