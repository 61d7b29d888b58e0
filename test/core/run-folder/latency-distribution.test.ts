import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { latencyDistribution } from '../../../src/core/run-folder/latency-distribution.js';
import { binEdges, binOf, cdfOf } from '../../../src/shared/latency-bins.js';
import type { RunRecord, Summary } from '../../../src/shared/run-record.js';
import { requestLines, requestRecord } from './request-lines.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sb-latency-bins-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const summary = (min: number, max: number, n = 1): Summary => ({ n, min, max }) as unknown as Summary;

/** A record of one level over [fromMs, toMs] whose E2E ran from 20 to 920 ms and TTFT was 5 ms throughout. */
const record = (fromMs: number, toMs: number): RunRecord =>
  ({
    levels: [
      {
        startMs: fromMs,
        endMs: toMs,
        ttftMs: summary(5, 5),
        tpotMs: summary(0, 0, 0),
        e2eMs: summary(20, 920),
      },
    ],
  }) as unknown as RunRecord;

describe('the latency distribution the results page draws', () => {
  it('counts every measured request once, in bins between the recorded min and max', async () => {
    // 1,000 measured requests of E2E 20 ms, every 100th 920 ms; a warm-up and a failure are left out.
    const records = Array.from({ length: 1000 }, (_, i) =>
      requestRecord(i, i % 100 === 0 ? { endMs: 1000 + i * 10 + 920 } : {}),
    );
    records.push(requestRecord(1000, { warmup: true, round: -1 }), requestRecord(1001, { ok: false, error: 'x' }));
    await writeFile(join(dir, 'requests.jsonl'), requestLines(records));
    const dist = await latencyDistribution(dir, record(1000, 12_000), [], 40);
    const e2e = dist.levels[0]!.bins.e2e!;
    expect(e2e.n).toBe(1000);
    expect(e2e.counts.reduce((a, b) => a + b, 0)).toBe(1000);
    expect(e2e.log).toBe(true);
    expect(e2e.counts[0]).toBe(990);
    expect(e2e.counts.at(-1)).toBe(10);
    expect(dist.levels[0]!.bins.ttft!.n).toBe(1000);
    // No TPOT was recorded (two-token answers of one chunk each would have one): no bins.
    expect(dist.levels[0]!.bins.tpot).toBeNull();
  });

  it('bins linearly for a narrow spread and logarithmically past a decade', () => {
    expect(binEdges(10, 50, 4)).toEqual({ edges: [10, 20, 30, 40, 50], log: false });
    const wide = binEdges(1, 1000, 3);
    expect(wide.log).toBe(true);
    expect(wide.edges.map((e) => Math.round(e))).toEqual([1, 10, 100, 1000]);
    expect(binOf(wide.edges, 1000, true)).toBe(2);
    expect(binOf(wide.edges, 0.5, true)).toBe(-1);
  });

  it('makes a CDF that ends at one', () => {
    const cdf = cdfOf({ edges: [0, 1, 2], counts: [3, 1], n: 4, log: false });
    expect(cdf).toEqual([
      [0, 0],
      [1, 0.75],
      [2, 1],
    ]);
  });
});
