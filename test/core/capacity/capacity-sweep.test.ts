import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runBenchmark } from '../../../src/core/benchmark.js';
import { htmlReport } from '../../../src/core/report/html.js';
import { loadRunFolder } from '../../../src/core/report/load-run-folder.js';
import { markdownReport } from '../../../src/core/report/markdown.js';
import type { StartServer } from '../../../src/core/servers/types.js';
import { attachedServer } from '../../fakes/attached-server.js';
import { BenchConfigSchema } from '../../../src/shared/config.js';
import { capacitySearches } from '../../../src/shared/capacity.js';
import { capacityTitle } from '../../../src/shared/capacity-format.js';
import { decodeRunJson } from '../../../src/shared/run-record-schema.js';
import { closeAll, startSim, testProfile } from '../sim/helpers.js';

afterAll(closeAll);

/** Starts one in-process simulator per server configuration, its step costs taken from the variant's extra arguments. */
const simPerConfig: StartServer = async (config) => {
  const args = config.extraArgs ?? [];
  const overrides: Record<string, unknown> = { 'step-base-ms': 2, 'max-model-len': 4096 };
  for (let i = 0; i + 1 < args.length; i += 2) overrides[args[i]!.replace(/^--/, '')] = Number(args[i + 1]);
  const sim = await startSim({ profile: testProfile(overrides), model: 'sim-model' });
  return attachedServer({ engine: 'attach', baseUrl: sim.url, model: 'sim-model', simulated: true }, () => sim.close());
};

describe('--find-capacity over a server sweep and several lengths', () => {
  it('searches every server configuration at every input/output length and records each search', async () => {
    // TPOT(c) = 2 + k·c ms with no jitter: k=20 meets an 80 ms p95 up to c=3; k=5 meets it at the bound c=4.
    const out = await mkdtemp(join(tmpdir(), 'sb-capacity-sweep-'));
    try {
      const config = BenchConfigSchema.parse({
        out,
        label: 'capacity-sweep',
        inputLen: [16, 48],
        outputLen: [8],
        concurrency: [2],
        rounds: 1,
        requestsPerRound: 60,
        warmup: 4,
        slo: { targets: 'tpot_p95=80' },
        findCapacity: true,
        capacityMax: 4,
        server: { engine: 'attach', url: 'http://127.0.0.1:9' },
        serverVariants: [{ extraArgs: ['--step-per-seq-ms', '20'] }, { extraArgs: ['--step-per-seq-ms', '5'] }],
      });
      const events: string[] = [];
      const result = await runBenchmark(config, {
        startServer: simPerConfig,
        onEvent: (e) => {
          if (e.type === 'run-started') events.push(`total ${e.totalLevels}`);
        },
      });
      expect(result.failure).toBeUndefined();
      expect(result.record.status).toBe('completed');
      // Four searches: they are a list, and the single `capacity` of one search is not written.
      expect(result.record.capacity).toBeUndefined();
      const searches = result.record.capacities!;
      // k=20: c=3 (62 ms) meets unless a stall of over 126 ms hits a request; then the answer is one step low, c=2.
      const atK20 = searches.slice(0, 2).map((c) => c.capacity);
      for (const c of atK20) expect([2, 3]).toContain(c);
      expect(
        searches.map((c) => [c.serverConfigIndex, c.inputLen, c.outputLen, c.outcome, c.capacity, c.above]),
      ).toEqual([
        [0, 16, 8, 'bracketed', atK20[0], atK20[0]! + 1],
        [0, 48, 8, 'bracketed', atK20[1], atK20[1]! + 1],
        [1, 16, 8, 'max-reached', 4, null],
        [1, 48, 8, 'max-reached', 4, null],
      ]);
      expect(searches.map((c) => c.probes.map((p) => p.load))).toEqual([
        [2, 4, 3],
        [2, 4, 3],
        [2, 4],
        [2, 4],
      ]);
      // Each probe points at its own level: the right server configuration and shape.
      for (const c of searches) {
        for (const p of c.probes) {
          const level = result.record.levels[p.levelIndex]!;
          expect([level.serverConfigIndex, level.inputLen, level.concurrency]).toEqual([
            c.serverConfigIndex,
            c.inputLen,
            p.load,
          ]);
        }
      }
      expect(result.record.levels).toHaveLength(10);
      expect(events).toEqual(['total 28']);
      expect(capacityTitle(searches[2]!)).toBe('input 16 / output 8 tokens · server 2: extraArgs=--step-per-seq-ms 5');
      // On disk, through the schema, and in the report: one section with a heading per search.
      const saved = decodeRunJson(await readFile(join(result.dir, 'run.json'), 'utf8'));
      if (!('record' in saved)) throw new Error(saved.problem);
      expect(capacitySearches(saved.record).map((c) => c.capacity)).toEqual([...atK20, 4, 4]);
      const folder = await loadRunFolder(result.dir);
      const html = htmlReport(folder);
      expect(html.match(/<h3>input \d+ \/ output 8 tokens · server \d: [^<]+<\/h3>/g)).toHaveLength(4);
      expect(html).toContain('<table id="table-capacity-4">');
      const md = markdownReport(folder);
      expect(md.match(/^## Capacity$/gm)).toHaveLength(1);
      expect(md.match(/^### input \d+ \/ output 8 tokens · server \d: /gm)).toHaveLength(4);
      expect(md).toContain('- capacity: at least c=4, the search bound, meets tpot_p95≤80 ms');
    } finally {
      await rm(out, { recursive: true, force: true });
    }
  }, 300_000);
});
