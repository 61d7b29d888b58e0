import { readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { compareSeries } from '../../../../src/core/report/compare/compare.js';
import { compareMarkdown } from '../../../../src/core/report/compare/markdown.js';
import { readCompareInput, readCompareInputs } from '../../../../src/core/report/compare/read-input.js';
import { loadRunFolder } from '../../../../src/core/report/load-run-folder.js';
import { jsonExporter } from '../../../../src/core/report/json.js';
import { vllmJson } from '../../../../src/core/report/vllm-json.js';
import { fixtureCopy, fixtureDir } from '../fixtures.js';
import { compareFixtures, slowedCopy } from './helpers.js';

const made: string[] = [];
afterAll(async () => {
  for (const d of made) await rm(dirname(d), { recursive: true, force: true });
});

const verdicts = (c: ReturnType<typeof compareSeries>, load: number) =>
  Object.fromEntries(
    c.levels.filter((l) => l.load.value === load).flatMap((l) => l.figures.map((f) => [f.key, f.verdict])),
  );

describe('compare: servebench run folders', () => {
  it('a copy of the closed run twice as slow on a newer engine: differs in that one condition, slower on every figure at c=4', async () => {
    const slow = await slowedCopy(2, (r) => {
      r.environment.engine.version = '0.12.0';
      r.label = 'closed-slow';
    });
    made.push(slow);
    const c = compareSeries(await readCompareInputs([fixtureDir('closed'), slow]));
    expect(c.series.map((s) => s.label)).toEqual(['closed', 'closed-slow']);
    expect(c.conditions.filter((r) => r.differs).map((r) => r.label)).toEqual(['engine and version']);
    // One condition differs: the comparison is about it, but it is not like for like.
    expect(c.likeForLike[1]).toMatchObject({ differs: ['engine and version'], likeForLike: false });
    expect(c.levels.map((l) => l.load.value)).toEqual([1, 4]);
    expect(verdicts(c, 4)).toEqual({
      throughput: 'slower',
      ttftP50: 'slower',
      ttftP95: 'slower',
      ttftP999: 'slower',
      tpotP50: 'slower',
      tpotP95: 'slower',
      e2eP50: 'slower',
      e2eP95: 'slower',
    });
    const ttft = c.levels[1]!.figures.find((f) => f.key === 'ttftP50')!;
    expect(ttft.ratio).toBeCloseTo(2, 6);
  });

  it('says beside each compared level how much load each side really offered', async () => {
    const held = await slowedCopy(1, (r) => {
      r.label = 'held';
      r.levels[1]!.offered = { inFlightMean: 3.2, inFlightP5: 2 };
    });
    made.push(held);
    const c = compareSeries(await readCompareInputs([fixtureDir('closed'), held]));
    const at4 = c.levels.find((l) => l.load.value === 4)!;
    // The fixture predates the measure: not recorded there.
    expect(at4.offered).toEqual(['not recorded', '3.2 (p5 2)']);
    expect(compareMarkdown(c)).toContain(
      'Offered load (really in flight, or sent per second): closed not recorded; held 3.2 (p5 2).',
    );
    expect(c.levels.find((l) => l.load.value === 1)!.offered).toEqual(['not recorded', 'not recorded']);
  });

  it('is like for like only when every recorded condition matches and a load was measured by both', async () => {
    const same = await slowedCopy(1, (r) => {
      r.label = 'same';
    });
    const profile = await slowedCopy(1, (r) => {
      r.label = 'hot profile';
      (r.config.server as unknown as Record<string, unknown>).simProfile = 'instant';
    });
    const workload = await slowedCopy(1, (r) => {
      r.label = 'warm';
      r.config.temperature = 0.7;
    });
    const elsewhere = await slowedCopy(1, (r) => {
      r.label = 'elsewhere';
      for (const l of r.levels) l.concurrency *= 64;
    });
    made.push(same, profile, workload, elsewhere);
    const c = compareSeries(await readCompareInputs([fixtureDir('closed'), same, profile, workload, elsewhere]));
    expect(c.likeForLike[1]).toMatchObject({ differs: [], likeForLike: true });
    // The simulator's profile is a server setting: a throttling scenario against a cool one is no like-for-like.
    expect(c.likeForLike[2]).toMatchObject({ differs: ['server settings'], likeForLike: false });
    expect(c.conditions.find((r) => r.key === 'serverSettings')?.values[2]).toContain('sim-profile=instant');
    expect(c.likeForLike[3]).toMatchObject({ differs: ['workload'], likeForLike: false });
    expect(c.likeForLike[4]).toMatchObject({ differs: [], likeForLike: false, noCommonLevel: true });
    expect(compareMarkdown(c)).toContain(
      'elsewhere against closed: the same recorded conditions, but not like for like',
    );
  });

  it('marks a copy that also runs another model "not like for like"', async () => {
    const other = await slowedCopy(1, (r) => {
      r.environment.engine.version = '0.12.0';
      r.environment.engine.model = 'another/model';
    });
    made.push(other);
    const c = compareSeries(await readCompareInputs([fixtureDir('closed'), other]));
    expect(c.series[1]!.label).toMatch(/^closed \(closed/); // same label: told apart by its folder
    expect(c.likeForLike[1]).toMatchObject({ differs: ['engine and version', 'model'], likeForLike: false });
    // The same requests: no difference anywhere.
    expect(new Set(Object.values(verdicts(c, 4)))).toEqual(new Set(['no difference the data can show']));
    expect(compareMarkdown(c)).toContain('NOT LIKE FOR LIKE, differs in 2 conditions (engine and version, model)');
  });

  it('a server sweep folder alone compares its configurations: diffusion threshold is the one axis', async () => {
    const series = await readCompareInput(fixtureDir('sweep'));
    expect(series.map((s) => s.label)).toEqual(['sweep [threshold=0.95]', 'sweep [threshold=0.9]']);
    const c = compareSeries(series);
    expect(c.conditions.filter((r) => r.differs).map((r) => r.label)).toEqual(['diffusion parameters']);
    expect(c.likeForLike[1]).toMatchObject({ differs: ['diffusion parameters'], likeForLike: false });
    expect(c.levels.map((l) => l.load.value)).toEqual([1, 2]);
    expect(verdicts(c, 1).throughput).toBe('faster');
    expect(verdicts(c, 2).throughput).toBe('faster');
  });

  it('matches levels by load and, where a run sweeps lengths, by lengths too', async () => {
    const sweep = await slowedCopy(1, (r) => {
      r.label = 'lengths';
      // The two levels become one load at two output lengths.
      r.levels[0]!.concurrency = 4;
      r.levels[0]!.outputLen = 8;
    });
    made.push(sweep);
    const c = compareSeries(await readCompareInputs([sweep, fixtureDir('closed')]));
    expect(c.levels.map((l) => [l.load.value, l.lengths])).toEqual([[4, [32, 16]]]);
    expect(c.unmatched).toEqual([
      'concurrency 1 (32 in / 16 out): in closed, not in the baseline',
      'concurrency 4 (32 in / 8 out): in the baseline, not in closed',
    ]);
    expect(compareMarkdown(c)).toContain('## c=4, 32 in / 16 out: closed against lengths');
  });

  it('is reproducible: the same inputs give the same Markdown', async () => {
    const a = compareMarkdown(compareSeries(await readCompareInput(fixtureDir('sweep'))));
    const b = compareMarkdown(compareSeries(await readCompareInput(fixtureDir('sweep'))));
    expect(a).toBe(b);
  });
});

describe('compare: files of other tools', () => {
  it('a vllm-json export of a run round-trips: same figures, same conditions, no difference', async () => {
    const dir = await fixtureCopy('closed');
    made.push(dir);
    const file = join(dirname(dir), 'closed.vllm.jsonl');
    await writeFile(file, vllmJson(await loadRunFolder(dir)));
    const c = compareSeries(await readCompareInputs([dir, file]));
    expect(c.series[1]).toMatchObject({ source: 'vllm', label: 'closed.vllm' });
    expect(c.likeForLike[1]).toMatchObject({ differs: [], likeForLike: true });
    expect(c.conditions.find((r) => r.key === 'simulated')!.values).toEqual(['SIMULATED', 'SIMULATED']);
    expect(c.levels).toHaveLength(2);
    for (const level of c.levels)
      for (const f of level.figures) {
        expect(f.ratio, `${level.load.value} ${f.key}`).toBeCloseTo(1, 3);
        expect(f.verdict).toBe('no difference the data can show');
      }
  });

  it('a servebench report --format json file round-trips: same figures and conditions, ratios only', async () => {
    const dir = await fixtureCopy('closed');
    made.push(dir);
    // A name that says nothing: the format is told by the content.
    const file = join(dirname(dir), 'export.txt');
    await writeFile(file, (await jsonExporter.render(await loadRunFolder(dir), {})) as string);
    const [s] = await readCompareInput(file);
    expect(s).toMatchObject({ source: 'servebench', label: 'closed' });
    expect(s!.conditions.measuredBy).toMatch(/^servebench .* \(report json export\)$/);
    const record = (await loadRunFolder(dir)).record;
    s!.levels.forEach((l, i) => {
      const r = record.levels[i]!;
      expect(l.blocks).toBeUndefined();
      expect(l.figures).toEqual({
        // Output tokens of the rounds over their windows, compare's throughput (run.json's is the rounds' mean).
        throughput: expect.closeTo(
          r.rounds.reduce((a, x) => a + x.outputTokPerSec * x.windowMs, 0) /
            r.rounds.reduce((a, x) => a + x.windowMs, 0),
          9,
        ),
        ttftP50: r.ttftMs.p50,
        ttftP95: r.ttftMs.p95,
        // The fixture was recorded before summaries carried p99.9: not recorded.
        ttftP999: null,
        tpotP50: r.tpotMs.p50,
        tpotP95: r.tpotMs.p95,
        e2eP50: r.e2eMs.p50,
        e2eP95: r.e2eMs.p95,
      });
    });
    const c = compareSeries(await readCompareInputs([file, file]));
    expect(c.likeForLike[1]).toMatchObject({ differs: [], likeForLike: true });
    expect(c.levels.map((l) => l.load.value)).toEqual([1, 4]);
    for (const level of c.levels)
      for (const f of level.figures) {
        expect(f.ratio, `${level.load.value} ${f.key}`).toBe(1);
        expect(f.verdict).toBe('no verdict');
        expect(f.why).toMatch(/ratio of the summaries only: .*report --format json file holds the summaries/);
      }
    // Against the run folder it came from: like for like, the same figures.
    const both = compareSeries(await readCompareInputs([dir, file]));
    expect(both.likeForLike[1]).toMatchObject({ differs: [], likeForLike: true });
    for (const level of both.levels)
      for (const f of level.figures) {
        // The file holds the fixture's summaries, recorded before p99.9 was: only the folder's requests give it.
        if (f.key === 'ttftP999') expect(f.value).toBeNull();
        else expect(f.ratio, `${level.load.value} ${f.key}`).toBeCloseTo(1, 3);
      }
  });

  it('a run.json alone (no requests.jsonl beside it) is read as its summaries; a damaged record says so', async () => {
    const dir = await fixtureCopy('closed');
    made.push(dir);
    await rm(join(dir, 'requests.jsonl'));
    const [s] = await readCompareInput(join(dir, 'run.json'));
    expect(s!.conditions.measuredBy).toMatch(/report json export/);
    const [folder] = await readCompareInput(join(fixtureDir('closed'), 'run.json'));
    expect(folder!.levels[0]!.blocks!.length).toBeGreaterThan(0);
    const bad = join(dirname(dir), 'bad.json');
    const record = JSON.parse(await readFile(join(dir, 'run.json'), 'utf8'));
    record.levels[0].ttftMs = 'fast';
    await writeFile(bad, JSON.stringify(record));
    await expect(readCompareInput(bad)).rejects.toThrow(/bad\.json is a servebench run record that is damaged/);
    // A folder's run.json cut short (not JSON at all) is still named a damaged run.json, with the fix.
    await writeFile(join(dir, 'run.json'), '{"schemaVersion":1,"levels":[');
    await expect(readCompareInput(join(dir, 'run.json'))).rejects.toThrow(/run\.json in .* is damaged .*restore it/);
  });

  it("reads vLLM's --save-detailed --append-result file: per-request figures equal vLLM's own summaries", async () => {
    const file = join(compareFixtures, 'vllm-detailed.json');
    const [s] = await readCompareInput(file);
    const lines = (await readFile(file, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(s!.source).toBe('vllm');
    expect(s!.conditions).toMatchObject({ model: 'meta-llama/Llama-3.1-8B-Instruct', inputLen: 32, outputLen: 16 });
    expect(s!.levels.map((l) => l.load)).toEqual([
      { kind: 'concurrency', value: 1 },
      { kind: 'concurrency', value: 4 },
    ]);
    s!.levels.forEach((l, i) => {
      expect(l.figures.ttftP50).toBeCloseTo(lines[i].median_ttft_ms, 9);
      expect(l.figures.tpotP50).toBeCloseTo(lines[i].median_tpot_ms, 9);
      expect(l.figures.throughput).toBeCloseTo(lines[i].output_throughput, 9);
      expect(l.missingRequests).toEqual({});
      // Failed requests (vLLM writes 0 and an error) are no latency sample.
      expect(l.blocks![0]!.requests.filter((r) => r.e2eMs !== null)).toHaveLength(lines[i].completed);
    });
  });

  it('a vLLM file without --save-detailed: latencies give E2E intervals, the rest is summary only and says why', async () => {
    const c = compareSeries(
      await readCompareInputs([
        join(compareFixtures, 'vllm-detailed.json'),
        join(compareFixtures, 'vllm-summary.json'),
      ]),
    );
    const level = c.levels.find((l) => l.load.value === 4)!;
    const by = Object.fromEntries(level.figures.map((f) => [f.key, f]));
    expect(by.e2eP50!.interval).toBeDefined();
    expect(by.ttftP50!.interval).toBeUndefined();
    expect(by.ttftP50!.ratio).not.toBeNull();
    expect(by.ttftP50!.why).toBe(
      'ratio of the summaries only: vllm-summary: vllm bench serve wrote no per-request TTFTs',
    );
    expect(by.ttftP95!.value).toBeNull();
    expect(by.ttftP95!.why).toMatch(
      /vllm-summary recorded no TTFT p95 \(vllm bench serve writes p99 only unless --metric-percentiles names 95/,
    );
    expect(c.unmatched).toEqual(['concurrency 1: in the baseline, not in vllm-summary']);
  });

  it("reads SGLang's bench_serving JSONL (bare Infinity rate; --output-details on the second line only)", async () => {
    const file = join(compareFixtures, 'sglang.jsonl');
    const [s] = await readCompareInput(file);
    const lines = (await readFile(file, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l.replace('Infinity', '"Infinity"')));
    expect(s!.source).toBe('sglang');
    expect(s!.conditions.measuredBy).toBe('sglang bench_serving');
    expect(s!.levels.map((l) => l.load.value)).toEqual([1, 4]);
    const [summary, detailed] = s!.levels;
    expect(summary!.blocks).toBeUndefined();
    expect(summary!.figures.e2eP50).toBe(lines[0].median_e2e_latency_ms);
    expect(summary!.missingRequests!.ttftP50).toMatch(/--output-details/);
    expect(detailed!.figures.ttftP50).toBeCloseTo(lines[1].median_ttft_ms, 9);
    expect(detailed!.figures.throughput).toBeCloseTo(lines[1].output_throughput, 9);
    expect(detailed!.figures.ttftP95).not.toBeNull(); // from the per-request TTFTs
    expect(detailed!.figures.e2eP95).toBeNull(); // SGLang writes median and p99 only, and no per-request latency
    expect(detailed!.missingRequests!.tpotP50).toBe(
      'sglang bench_serving wrote no per-request latencies (TPOT needs all three)',
    );
  });

  it('refuses a file of neither tool, and an empty one, with one line naming what to give', async () => {
    const dir = await fixtureCopy('closed');
    made.push(dir);
    const junk = join(dirname(dir), 'junk.json');
    await writeFile(junk, '{"hello": 1}\n');
    await expect(readCompareInput(junk)).rejects.toThrow(
      /is no file compare knows .*give a run folder, a servebench report --format json file, a vllm/,
    );
    await writeFile(junk, '');
    await expect(readCompareInput(junk)).rejects.toThrow(/is empty/);
    await expect(readCompareInput(join(dirname(dir), 'nope'))).rejects.toThrow(/nothing at .*give a run folder/);
  });
});
