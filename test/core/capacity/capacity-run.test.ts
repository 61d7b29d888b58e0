import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runBenchmark } from '../../../src/core/benchmark.js';
import { htmlReport } from '../../../src/core/report/html.js';
import { loadRunFolder } from '../../../src/core/report/load-run-folder.js';
import { markdownReport } from '../../../src/core/report/markdown.js';
import { attachTo } from '../../fakes/attached-server.js';
import { BenchConfigSchema } from '../../../src/shared/config.js';
import { capacityLines } from '../../../src/shared/capacity-format.js';
import type { RunRecord } from '../../../src/shared/run-record.js';
import { closeAll, startSim, testProfile } from '../sim/helpers.js';

afterAll(closeAll);

/** Attaches the run to a simulator already listening. */
const attach = (url: string) => attachTo(url);

describe('--find-capacity against the simulator', () => {
  it('finds the capacity the step model implies, in fewer levels than a sweep of the range', async () => {
    // Every decode step costs 2 ms + 20 ms per running sequence: TPOT(c) = 2 + 20c ms, no jitter.
    const profile = testProfile({ 'step-base-ms': 2, 'step-per-seq-ms': 20, 'max-model-len': 4096 });
    const tpot = (c: number): number => profile.stepBaseMs + profile.stepPerSeqMs * c;
    // A limit just under c=4 (82 ms) and far over c=3 (62 ms). A busy machine delays chunks: a request's TPOT moves by
    // (last chunk's delay - first chunk's delay) / 7, and p95 over 60 requests is bounded by the slowest. So c=3 may
    // miss past 126 ms of stall (the answer is then one bracketing step low, c=2, which flips only past 266 ms); c=4
    // can drift to "uncertain" but never "meets" (every one of its requests would have to read under 80 ms).
    const limitMs = tpot(4) - 2;
    const truth = Math.floor((limitMs - profile.stepBaseMs) / profile.stepPerSeqMs);
    expect(truth).toBe(3);
    const sim = await startSim({ profile, model: 'sim-model' });
    const out = await mkdtemp(join(tmpdir(), 'sb-capacity-'));
    try {
      const config = BenchConfigSchema.parse({
        out,
        label: 'capacity',
        inputLen: [16],
        outputLen: [8],
        concurrency: [2],
        rounds: 1,
        requestsPerRound: 60,
        warmup: 4,
        slo: { targets: `tpot_p95=${limitMs}` },
        findCapacity: true,
        capacityMax: 16,
        gpuPricePerHour: 2,
        server: { engine: 'attach', url: sim.url },
      });
      const result = await runBenchmark(config, { startServer: attach(sim.url) });
      expect(result.failure).toBeUndefined();
      const capacity = result.record.capacity!;
      // Within one bracketing step of the truth, never above it: stalls only make levels slower.
      expect([truth - 1, truth]).toContain(capacity.capacity);
      const found = capacity.capacity!;
      expect(capacity).toMatchObject({ mode: 'concurrency', outcome: 'bracketed', above: found + 1 });
      // Doubling 2, 4, then one bisection: fewer levels than the 15 of a full sweep c=2..16, or the 4 of 2, 4, 8, 16.
      expect(capacity.probes.map((p) => p.load)).toEqual([2, 4, 3]);
      expect(result.record.levels.map((l) => l.concurrency)).toEqual([2, 4, 3]);
      const above = capacity.probes.find((p) => p.load === truth + 1)!;
      expect(above.verdict).not.toBe('meets');
      // Goodput at every level, in requests/s, and the cost at the capacity.
      for (const p of capacity.probes) expect(p.goodputReqPerSec).not.toBeNull();
      expect(capacity.probes.find((p) => p.load === found)!.goodputReqPerSec).toBeGreaterThan(0);
      expect(capacity.costPerMOutputTokUsd).toBeGreaterThan(0);
      expect(capacityLines(capacity)[0]).toMatch(
        new RegExp(
          `^capacity: c=${found} meets tpot_p95≤80 ms \\(c=${found + 1} (fails|uncertain, the interval straddles the limit): TPOT p95 [\\d.,]+ ms \\[[\\d.,]+, [\\d.,]+\\]\\) — [\\d,]+ out tok\\/s, \\$[\\d.]+ per 1M output tokens$`,
        ),
      );
      // The record on disk carries it too.
      const saved = JSON.parse(await readFile(join(result.dir, 'run.json'), 'utf8')) as RunRecord;
      expect(saved.capacity?.capacity).toBe(found);
      // The reports show it: the answer, each level searched, and the SLO region shaded on the Pareto chart.
      const folder = await loadRunFolder(result.dir);
      const md = markdownReport(folder);
      expect(md).toContain('## Capacity');
      expect(md).toContain(`- capacity: c=${found} meets tpot_p95≤80 ms (c=${found + 1} `);
      expect(md).toMatch(new RegExp(`\\| ${found} \\| meets \\(capacity\\) \\| [\\d.]+ \\[[\\d.]+, [\\d.]+\\] \\|`));
      const html = htmlReport(folder);
      expect(html).toContain('<section id="capacity"><h2>Capacity</h2>');
      expect(html).toMatch(/<figure class="chart" id="chart-pareto">.*<rect class="slo-band"/s);
    } finally {
      await rm(out, { recursive: true, force: true });
    }
  }, 120_000);
});
