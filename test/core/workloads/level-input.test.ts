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
});
