import { execFileSync } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { percentile } from '../../../../src/core/metrics/percentiles.js';
import { compareCharts } from '../../../../src/core/report/compare/charts.js';
import { compareSeries } from '../../../../src/core/report/compare/compare.js';
import { readSiblingText } from '../../../../src/core/report/compare/foreign-input.js';
import { compareHtml } from '../../../../src/core/report/compare/html.js';
import { compareMarkdown } from '../../../../src/core/report/compare/markdown.js';
import { readCompareInput, readCompareInputs } from '../../../../src/core/report/compare/read-input.js';
import { compareText } from '../../../../src/core/report/compare/text.js';
import type { CompareSeries, FigureKey } from '../../../../src/core/report/compare/types.js';
import { fixtureDir } from '../fixtures.js';

const root = new URL('../../../fixtures/', import.meta.url).pathname;
const AIPERF_DIR = join(root, 'aiperf', 'servebench_sim-llama-8b-openai-chat-concurrency4');
const AIPERF_JSON = join(AIPERF_DIR, 'profile_export_aiperf.json');
const AIPERF_CSV = join(AIPERF_DIR, 'profile_export_aiperf.csv');
const GUIDELLM = join(root, 'guidellm', 'benchmarks.json');
const GUIDELLM_SAMPLED = join(root, 'guidellm', 'benchmarks-sampled.json');
const IP_DIR = join(root, 'inference-perf', 'reports-20261201-104000');
const LLMD = join(root, 'llmd-benchmark', 'benchmark_report_v0.2,_stage_1_lifecycle_metrics.json.yaml');

const json = async <T>(file: string): Promise<T> => JSON.parse(await readFile(file, 'utf8')) as T;

// The parts of each tool's file the tests read, by the keys its source writes.
interface AiperfStat {
  p50: number;
  p95: number;
  avg: number;
}
interface AiperfDoc {
  time_to_first_token: AiperfStat;
  inter_token_latency: AiperfStat;
  request_latency: AiperfStat;
  output_token_throughput: AiperfStat;
  input_config: { loadgen: Record<string, unknown> };
}
interface GuidellmRequest {
  time_to_first_token_ms: number;
  request_latency: number;
  output_tokens: number;
  request_start_time: number;
  request_end_time: number;
}
interface GuidellmDoc {
  benchmarks: Array<{
    requests: { successful: GuidellmRequest[] };
    metrics: Record<
      'time_to_first_token_ms' | 'time_per_output_token_ms' | 'inter_token_latency_ms' | 'request_latency',
      { successful: { median: number; percentiles: { p50: number; p95: number } } }
    >;
  }>;
}
interface IpDoc {
  benchmark_time_seconds: number;
  successes: {
    output_tokens: { total: number };
    throughput: { output_tokens_per_sec: number };
    latency: Record<'time_to_first_token' | 'request_latency', { median: number; p95: number }>;
  };
}
const only = (s: CompareSeries[]): CompareSeries => {
  expect(s).toHaveLength(1);
  return s[0]!;
};
const matches = (s: CompareSeries): Record<string, string | undefined> =>
  Object.fromEntries(Object.entries(s.definitions ?? {}).map(([k, d]) => [k, d?.match]));
const lin = (values: number[], p: number): number =>
  percentile(
    [...values].sort((a, b) => a - b),
    p,
  );

let tmp: string;
beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'sb-foreign-'));
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

describe('AIPerf profile exports', () => {
  it('reads profile_export_aiperf.json by its keys: one level at its concurrency, TTFT as servebench, ITL as its own', async () => {
    const raw = await json<AiperfDoc>(AIPERF_JSON);
    const s = only(await readCompareInput(AIPERF_JSON));
    expect(s.source).toBe('aiperf');
    expect(s.label).toBe('servebench_sim-llama-8b-openai-chat-concurrency4');
    expect(s.conditions).toMatchObject({ model: 'servebench/sim-llama-8b', inputLen: 32, outputLen: 16 });
    expect(s.levels.map((l) => l.load)).toEqual([{ kind: 'concurrency', value: 4 }]);
    const f = s.levels[0]!.figures;
    expect(f.ttftP50).toBe(raw.time_to_first_token.p50);
    expect(f.tpotP95).toBe(raw.inter_token_latency.p95);
    expect(f.e2eP50).toBe(raw.request_latency.p50);
    expect(f.throughput).toBe(raw.output_token_throughput.avg);
    expect(matches(s)).toMatchObject({ ttftP50: 'same', tpotP50: 'differs', e2eP50: 'differs', throughput: 'differs' });
    expect(s.definitions?.tpotP50?.name).toBe('AIPerf inter_token_latency p50');
  });

  it('reads the CSV export (two decimals) with the load from the JSON beside it, or from its artifacts folder name', async () => {
    const fromJson = only(await readCompareInput(AIPERF_JSON)).levels[0]!.figures;
    const s = only(await readCompareInput(AIPERF_CSV));
    expect(s.levels[0]!.load).toEqual({ kind: 'concurrency', value: 4 });
    for (const k of Object.keys(fromJson) as FigureKey[])
      expect(s.levels[0]!.figures[k], k).toBeCloseTo(fromJson[k] as number, 2);
    expect(s.notes.join(' ')).toContain('two decimals');
    // The CSV alone in a folder AIPerf named: the stimulus in the name gives the load.
    const named = join(tmp, 'm-openai-chat-request_rate2.5');
    await mkdir(named, { recursive: true });
    await cp(AIPERF_CSV, join(named, 'profile_export_aiperf.csv'));
    expect(only(await readCompareInput(join(named, 'profile_export_aiperf.csv'))).levels[0]!.load).toEqual({
      kind: 'rate',
      value: 2.5,
    });
    // Alone anywhere else: no load, said in one line with the fix.
    const alone = join(tmp, 'alone.csv');
    await cp(AIPERF_CSV, alone);
    await expect(readCompareInput(alone)).rejects.toThrow(
      /AIPerf's CSV export, which records no load: keep profile_export_aiperf\.json beside it/,
    );
  });

  it("reads AIPerf's artifacts folder as its JSON export", async () => {
    const s = only(await readCompareInput(AIPERF_DIR));
    expect(s.source).toBe('aiperf');
    expect(s.path).toBe(AIPERF_JSON);
  });

  it('takes a rate over a concurrency, and concurrency 1 when neither was given (its user_config.py rules)', async () => {
    const raw = await json<AiperfDoc>(AIPERF_JSON);
    raw.input_config.loadgen = { request_rate: 8, request_rate_mode: 'constant', concurrency: 16 };
    const a = join(tmp, 'rate.json');
    await writeFile(a, JSON.stringify(raw));
    const rate = only(await readCompareInput(a));
    expect(rate.levels[0]!.load).toEqual({ kind: 'rate', value: 8 });
    expect(rate.notes.join(' ')).toMatch(/constant arrivals.*Poisson/);
    raw.input_config.loadgen = {};
    await writeFile(a, JSON.stringify(raw));
    expect(only(await readCompareInput(a)).levels[0]!.load).toEqual({ kind: 'concurrency', value: 1 });
  });
});

describe('guidellm benchmarks.json', () => {
  it("with every request listed, servebench's figures are computed from them exactly", async () => {
    const raw = await json<GuidellmDoc>(GUIDELLM);
    const s = only(await readCompareInput(GUIDELLM));
    expect(s.source).toBe('guidellm');
    expect(s.conditions.measuredBy).toBe('guidellm 0.8.0');
    expect(s.levels.map((l) => l.load)).toEqual([
      { kind: 'concurrency', value: 1 },
      { kind: 'concurrency', value: 4 },
    ]);
    expect(new Set(Object.values(matches(s)))).toEqual(new Set(['converted']));
    // Recomputed here from guidellm's own per-request fields (not the timings the reader uses): the same numbers.
    const reqs = raw.benchmarks[1]!.requests.successful;
    const ttft = reqs.map((r) => r.time_to_first_token_ms);
    const e2e = reqs.map((r) => r.request_latency * 1000);
    const tpot = reqs.map((r, i) => (e2e[i]! - ttft[i]!) / (r.output_tokens - 1));
    const f = s.levels[1]!.figures;
    expect(f.ttftP50).toBeCloseTo(lin(ttft, 50), 6);
    expect(f.ttftP95).toBeCloseTo(lin(ttft, 95), 6);
    expect(f.tpotP50).toBeCloseTo(lin(tpot, 50), 6);
    expect(f.e2eP95).toBeCloseTo(lin(e2e, 95), 6);
    const window =
      Math.max(...reqs.map((r) => r.request_end_time)) - Math.min(...reqs.map((r) => r.request_start_time));
    expect(f.throughput).toBeCloseTo(reqs.reduce((a, r) => a + r.output_tokens, 0) / window, 6);
    // guidellm's own TPOT counts the first token: it is not what was compared.
    expect(f.tpotP50).not.toBeCloseTo(raw.benchmarks[1]!.metrics.time_per_output_token_ms.successful.median, 1);
    expect(s.levels[1]!.blocks?.[0]?.requests).toHaveLength(16);
  });

  it('with the requests sampled away, its summaries under their own names (inverse-CDF, token-weighted)', async () => {
    const raw = await json<GuidellmDoc>(GUIDELLM_SAMPLED);
    const s = only(await readCompareInput(GUIDELLM_SAMPLED));
    expect(matches(s)).toMatchObject({
      ttftP50: 'differs',
      tpotP50: 'differs',
      e2eP50: 'differs',
      throughput: 'differs',
    });
    const m = raw.benchmarks[1]!.metrics;
    expect(s.levels[1]!.figures.ttftP50).toBe(m.time_to_first_token_ms.successful.percentiles.p50);
    expect(s.levels[1]!.figures.tpotP95).toBe(m.inter_token_latency_ms.successful.percentiles.p95);
    expect(s.levels[1]!.figures.e2eP50).toBeCloseTo(m.request_latency.successful.percentiles.p50 * 1000, 9);
    expect(s.definitions?.tpotP50?.note).toMatch(/time_per_output_token_ms counts the first token/);
    expect(s.levels[1]!.blocks).toBeUndefined();
  });
});

describe('inference-perf reports', () => {
  it("a reports folder is one series, a level per stage; throughput from the server's counts over its window", async () => {
    const stage1 = await json<IpDoc>(join(IP_DIR, 'stage_1_lifecycle_metrics.json'));
    const s = only(await readCompareInput(IP_DIR));
    expect(s.source).toBe('inference-perf');
    expect(s.conditions.model).toBe('servebench/sim-llama-8b');
    expect(s.levels.map((l) => l.load)).toEqual([
      { kind: 'concurrency', value: 1 },
      { kind: 'concurrency', value: 4 },
    ]);
    const f = s.levels[1]!.figures;
    expect(f.throughput).toBeCloseTo(stage1.successes.output_tokens.total / stage1.benchmark_time_seconds, 9);
    // Its own rate counts the client's re-tokenization: not the figure compared.
    expect(f.throughput).not.toBeCloseTo(stage1.successes.throughput.output_tokens_per_sec, 1);
    expect(f.ttftP50).toBeCloseTo(stage1.successes.latency.time_to_first_token.median * 1000, 9);
    expect(f.e2eP95).toBeCloseTo(stage1.successes.latency.request_latency.p95 * 1000, 9);
    expect(matches(s)).toMatchObject({ throughput: 'converted', ttftP50: 'same', tpotP50: 'differs', e2eP50: 'same' });
  });

  it('a stage file alone is one level; the summary over all stages is refused: it names no load', async () => {
    const one = only(await readCompareInput(join(IP_DIR, 'stage_0_lifecycle_metrics.json')));
    expect(one.label).toBe('reports-20261201-104000 stage 0');
    expect(one.levels[0]!.load).toEqual({ kind: 'concurrency', value: 1 });
    await expect(readCompareInput(join(IP_DIR, 'summary_lifecycle_metrics.json'))).rejects.toThrow(
      /over all stages and records no load: give its stage_N_lifecycle_metrics\.json files or the reports folder/,
    );
  });
});

describe('llm-d Benchmark Reports', () => {
  it('reads a YAML report by its keys; what each field means follows the tool that measured it', async () => {
    const s = only(await readCompareInput(LLMD));
    expect(s.source).toBe('llmd-report');
    expect(s.conditions).toMatchObject({
      measuredBy: 'inference-perf 0.3.0 (llm-d Benchmark Report 0.2)',
      engine: 'vllm vllm/vllm-openai:v0.11.0',
      gpu: '1 × NVIDIA-H200',
    });
    expect(s.levels[0]!.load).toEqual({ kind: 'concurrency', value: 4 });
    const stage1 = await json<IpDoc>(join(IP_DIR, 'stage_1_lifecycle_metrics.json'));
    expect(s.levels[0]!.figures.ttftP50).toBeCloseTo(stage1.successes.latency.time_to_first_token.median * 1000, 9);
    expect(matches(s)).toMatchObject({ ttftP50: 'same', tpotP50: 'differs', e2eP50: 'same', throughput: 'differs' });
    expect(s.definitions?.tpotP50?.name).toBe('inference-perf (Benchmark Report) time_per_output_token p50');
  });

  it('an AIPerf report carries its ITL as inter_token_latency, a tool compare does not know gets every figure apart', async () => {
    const text = await readFile(LLMD, 'utf8');
    const aiperf = join(tmp, 'benchmark_report_aiperf.yaml');
    await writeFile(
      aiperf,
      text.replace('tool: inference-perf', 'tool: aiperf').replace(/time_per_output_token:\n/, 'unused_tpot:\n'),
    );
    const a = only(await readCompareInput(aiperf));
    expect(a.definitions?.tpotP50?.name).toBe('aiperf (Benchmark Report) inter_token_latency p50');
    expect(a.levels[0]!.figures.tpotP50).not.toBeNull();
    const other = join(tmp, 'benchmark_report_other.yaml');
    await writeFile(other, text.replace('tool: inference-perf', 'tool: some-harness'));
    expect(new Set(Object.values(matches(only(await readCompareInput(other)))))).toEqual(new Set(['differs']));
  });

  it("reads llm-d's open-loop form: rate_qps with concurrency .inf (no cap)", async () => {
    const file = join(tmp, 'benchmark_report_rate.yaml');
    await writeFile(
      file,
      (await readFile(LLMD, 'utf8')).replace(/ {6}concurrency: 4\n/, '      rate_qps: 10\n      concurrency: .inf\n'),
    );
    const s = only(await readCompareInput(file));
    expect(s.levels[0]!.load).toEqual({ kind: 'rate', value: 10 });
    expect(s.notes.join(' ')).not.toContain('capped');
  });

  it('refuses v0.1 and a report with no load in one line each', async () => {
    const v01 = join(tmp, 'v01.yaml');
    await writeFile(v01, 'version: "0.1"\nrun:\n  uid: x\nresults: {}\nscenario: {}\n');
    await expect(readCompareInput(v01)).rejects.toThrow(/Benchmark Report v0\.1: compare reads v0\.2 and v0\.2\.1/);
    const noLoad = join(tmp, 'noload.yaml');
    await writeFile(noLoad, (await readFile(LLMD, 'utf8')).replace(/ {6}concurrency: 4\n/, ''));
    await expect(readCompareInput(noLoad)).rejects.toThrow(
      /records neither scenario\.load\.standardized\.rate_qps nor concurrency/,
    );
  });
});

describe('telling formats apart, and refusing', () => {
  it('--format-in forces a reader, which refuses another format naming what it expected and what it found', async () => {
    await expect(readCompareInput(GUIDELLM, { formatIn: 'aiperf' })).rejects.toThrow(
      /benchmarks\.json is not an AIPerf profile export \(.*\): found an object with keys metadata, config, benchmarks$/,
    );
    await expect(readCompareInput(AIPERF_JSON, { formatIn: 'inference-perf' })).rejects.toThrow(
      /is not an inference-perf lifecycle report .*: found an object with keys request_throughput/,
    );
    await expect(readCompareInput(join(root, 'compare', 'sglang.jsonl'), { formatIn: 'vllm' })).rejects.toThrow(
      /is not a vllm bench serve --save-result file: found an SGLang result/,
    );
    // A servebench run is always read as one.
    expect((await readCompareInput(fixtureDir('closed'), { formatIn: 'aiperf' }))[0]!.source).toBe('servebench');
  });

  it("a file of the right format with a wrong field is refused with the field's path (zod)", async () => {
    const text = await readFile(GUIDELLM, 'utf8');
    const bad = join(tmp, 'bad-guidellm.json');
    await writeFile(
      bad,
      text.replace('"request_totals": {"successful": 16', '"request_totals": {"successful": "many"'),
    );
    await expect(readCompareInput(bad)).rejects.toThrow(
      /is a guidellm benchmarks\.json that compare cannot read \(benchmarks\[0\]\.metrics\.request_totals\.successful: /,
    );
  });

  it('a JSON file of none of the formats is refused with the list of what compare reads', async () => {
    const other = join(tmp, 'other.json');
    await writeFile(other, JSON.stringify({ hello: 'world' }));
    await expect(readCompareInput(other)).rejects.toThrow(/no file compare knows.*AIPerf profile export, a guidellm/);
  });

  it('a FIFO beside a report (config.yaml) is passed over at once, never waited on', async () => {
    const dir = join(tmp, 'fifo');
    await mkdir(dir);
    execFileSync('mkfifo', [join(dir, 'config.yaml')]);
    expect(await readSiblingText(join(dir, 'config.yaml'))).toBeNull();
    await cp(join(IP_DIR, 'stage_1_lifecycle_metrics.json'), join(dir, 'stage_1_lifecycle_metrics.json'));
    expect(only(await readCompareInput(dir)).conditions.model).toBeUndefined();
  });
});

describe('numbers no measurement gives', () => {
  it('a negative figure, a p95 below its p50 and a load of zero are named and left out, never compared', async () => {
    const raw = await json<AiperfDoc>(AIPERF_JSON);
    raw.time_to_first_token.p50 = -3;
    raw.request_latency.p95 = raw.request_latency.p50 / 2;
    const file = join(tmp, 'impossible', 'profile_export_aiperf.json');
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, JSON.stringify(raw));
    const s = only(await readCompareInput(file));
    const f = s.levels[0]!.figures;
    expect([f.ttftP50, f.e2eP50, f.e2eP95]).toEqual([null, null, null]);
    expect(f.ttftP95).toBe(raw.time_to_first_token.p95);
    expect(s.notes).toContain('TTFT p50 at concurrency 4 was -3, which no measurement gives: left out');
    expect(s.notes).toContain('E2E p95 at concurrency 4 was below its p50: both left out');
    raw.input_config.loadgen = { concurrency: 0 };
    await writeFile(file, JSON.stringify(raw));
    await expect(readCompareInput(file)).rejects.toThrow(/holds no level at a load above zero/);
  });

  it('a guidellm request whose first token came before its send gives no TTFT or TPOT, and is named', async () => {
    const raw = await json<
      GuidellmDoc & {
        benchmarks: Array<{ requests: { successful: Array<{ info: { timings: Record<string, number> } }> } }>;
      }
    >(GUIDELLM);
    const t = raw.benchmarks[1]!.requests.successful[0]!.info.timings;
    t.first_token_iteration = t.request_start! - 1;
    const file = join(tmp, 'early-token.json');
    await writeFile(file, JSON.stringify(raw));
    const s = only(await readCompareInput(file));
    expect(s.notes).toContain(
      '1 request(s) at concurrency 4 had timings no request can have: left out of the latencies',
    );
    expect(s.levels[1]!.blocks![0]!.requests.filter((r) => r.ttftMs === null)).toHaveLength(1);
  });
});

describe('compare against each tool: the figures side by side, with how each was read', () => {
  const inputs: Array<[string, string]> = [
    ['AIPerf', AIPERF_JSON],
    ['guidellm', GUIDELLM_SAMPLED],
    ['inference-perf', IP_DIR],
    ['llm-d report', LLMD],
  ];

  it.each(inputs)('%s: differing figures get their own rows, never a ratio or verdict', async (_tool, path) => {
    const c = compareSeries(await readCompareInputs([fixtureDir('closed'), path]), { replicates: 200 });
    const level = c.levels.find((l) => l.load.kind === 'concurrency' && l.load.value === 4)!;
    expect(level).toBeDefined();
    const s = c.series[1]!;
    let own = 0;
    for (const f of level.figures) {
      const d = s.definitions?.[f.key];
      if (d?.match !== 'differs') continue;
      if (f.label === d.name) {
        own++;
        // The tool's own figure: its value, nothing on servebench's side, no ratio, its definition as the note.
        expect(f.baseline).toBeNull();
        expect(f.value).not.toBeNull();
        expect(f.ratio).toBeNull();
        expect(f.verdict).toBe('no verdict');
        expect(f.why).toContain(d.note);
      } else {
        // servebench's row: the baseline's figure alone.
        expect(f.value).toBeNull();
        expect(f.ratio).toBeNull();
      }
    }
    expect(own).toBeGreaterThanOrEqual(2);
    // A figure both define alike is compared (a ratio; summaries only, so no verdict).
    const ttft = level.figures.find((f) => f.key === 'ttftP50' && f.label === 'TTFT p50')!;
    if (s.definitions?.ttftP50?.match !== 'differs') expect(ttft.ratio).toBeCloseTo(1, 0);
    const md = compareMarkdown(c);
    const html = compareHtml(c, new Date(0));
    const text = compareText(c);
    for (const out of [md, html, text])
      expect(out).toContain(`${s.label.replace(/&/g, '&amp;')}: how its figures were read`);
    const tpot = s.definitions?.tpotP50;
    expect(tpot?.match).toBe('differs');
    for (const out of [md, text]) expect(out).toContain(tpot!.name);
    // No chart puts another tool's own quantity on servebench's axis.
    for (const chart of compareCharts(c.series).filter((ch) => ch.id.startsWith('cmp-tpot')))
      expect(chart.series.filter((x) => x.name.startsWith(s.label)).flatMap((x) => x.points)).toEqual([]);
  });

  it('guidellm with every request: converted figures get intervals and verdicts like a servebench run', async () => {
    const c = compareSeries(await readCompareInputs([fixtureDir('closed'), GUIDELLM]), { replicates: 200 });
    const level = c.levels.find((l) => l.load.value === 4)!;
    expect(level.figures.map((f) => f.label)).toEqual([
      'output throughput',
      'TTFT p50',
      'TTFT p95',
      'TTFT p99.9',
      'TPOT p50',
      'TPOT p95',
      'E2E p50',
      'E2E p95',
    ]);
    expect(level.figures.every((f) => f.interval !== undefined)).toBe(true);
  });

  it('two files of one tool compare its own figures with each other under its name', async () => {
    const copy = join(tmp, 'copy', 'profile_export_aiperf.json');
    await mkdir(dirname(copy), { recursive: true });
    await cp(AIPERF_JSON, copy);
    const c = compareSeries(await readCompareInputs([AIPERF_JSON, copy]), { replicates: 200 });
    const tpot = c.levels[0]!.figures.find((f) => f.key === 'tpotP50')!;
    expect(tpot.label).toBe('AIPerf inter_token_latency p50');
    expect(tpot.ratio).toBe(1);
    expect(c.levels[0]!.figures.filter((f) => f.key === 'tpotP50')).toHaveLength(1);
  });
});
