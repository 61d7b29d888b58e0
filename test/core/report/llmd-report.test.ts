import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { parse, parseAllDocuments } from 'yaml';
import type { Document } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compareSeries } from '../../../src/core/report/compare/compare.js';
import { readCompareInput, readCompareInputs } from '../../../src/core/report/compare/read-input.js';
import { loadRunFolder } from '../../../src/core/report/load-run-folder.js';
import { llmdReportExporter, llmdReportFiles, llmdReports } from '../../../src/core/report/llmd-report.js';
import { findExporter, renderExport, renderExportFiles } from '../../../src/core/report/registry.js';
import { FIXTURES, FIXTURE_SECRETS, fixtureDir } from './fixtures.js';

const fixtures = new URL('../../fixtures/llmd-benchmark/', import.meta.url).pathname;
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

/**
 * llm-d-benchmark's published JSON Schema of the Benchmark Report v0.2, compiled strictly. pydantic writes two
 * keywords JSON Schema does not define: `discriminator` (an annotation; `oneOf` does the checking) and `ge`
 * (Field(ge=...) on a union), which this validator enforces as the minimum pydantic checks.
 */
async function schemaValidator() {
  const schema = JSON.parse(await readFile(join(fixtures, 'br_v0_2_json_schema.json'), 'utf8'));
  const ajv = new Ajv2020({ allErrors: true, strict: true });
  ajv.addKeyword({ keyword: 'discriminator' });
  ajv.addKeyword({ keyword: 'ge', compile: (ge: number) => (v: unknown) => typeof v !== 'number' || v >= ge });
  addFormats(ajv);
  return ajv.compile(schema);
}

// The parts of a report the tests read.
interface Stat {
  units: string;
  mean?: number;
}
interface Report {
  run: { description: string };
  scenario: {
    stack: Array<{ standardized: { tool: string } }>;
    load: { standardized: Record<string, unknown> & { concurrency?: number; rate_qps?: number; stage: number } };
  };
  results: {
    request_performance: {
      aggregate: {
        latency: Record<
          'time_to_first_token' | 'time_per_output_token' | 'inter_token_latency' | 'request_latency',
          Stat
        >;
        requests: Record<string, unknown>;
        throughput: Record<'output_token_rate', Stat>;
      };
    };
  };
}
const asReport = (o: unknown): Report => o as Report;

// The unit checks schema_v0_2.py makes beyond the JSON schema (check_units validators), per field.
const UNITS: Record<string, string[]> = {
  time_to_first_token: ['ms', 's'],
  request_latency: ['ms', 's'],
  time_per_output_token: ['ms/token', 's/token'],
  inter_token_latency: ['ms/token', 's/token'],
  normalized_time_per_output_token: ['ms/token', 's/token'],
  output_token_rate: ['tokens/s'],
  total_token_rate: ['tokens/s'],
  input_token_rate: ['tokens/s'],
  request_rate: ['queries/s'],
  input_length: ['count', 'pixels'],
  output_length: ['count', 'pixels'],
  power_consumption: ['Watts'],
};

/** The pydantic model's checks the JSON schema cannot state, as "path: problem" lines. */
function pydanticProblems(report: Report): string[] {
  const out: string[] = [];
  const walk = (o: unknown, path: string): void => {
    if (!o || typeof o !== 'object') return;
    for (const [k, v] of Object.entries(o)) {
      const units = v && typeof v === 'object' ? (v as { units?: unknown }).units : undefined;
      if (UNITS[k] && typeof units === 'string' && !UNITS[k]!.includes(units)) out.push(`${path}.${k}: units ${units}`);
      walk(v, `${path}.${k}`);
    }
  };
  walk(report.results, 'results');
  const c = report.scenario?.load?.standardized?.concurrency;
  if (c !== undefined && !Number.isInteger(c)) out.push(`concurrency ${c} is not an integer`);
  return out;
}

let tmp: string;
beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'sb-llmd-'));
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

describe('report --format llmd-benchmark-report', () => {
  it.each(FIXTURES)(
    'writes a Benchmark Report v0.2 per level of %s, each valid against its published schema',
    async (name) => {
      const validate = await schemaValidator();
      const folder = await loadRunFolder(fixtureDir(name));
      const files = (await renderExportFiles(llmdReportExporter, folder))!;
      expect(files).toHaveLength(folder.record.levels.length);
      for (const [i, f] of files.entries()) {
        expect(f.name).toMatch(/^benchmark_report_v0\.2,_servebench_.+_level\d+\.yaml$/);
        const report = parse(f.text) as Report;
        const ok = validate(report);
        expect(validate.errors ?? [], `${f.name}: ${JSON.stringify(validate.errors?.slice(0, 3))}`).toEqual([]);
        expect(ok).toBe(true);
        expect(pydanticProblems(report)).toEqual([]);
        expect(report.scenario.load.standardized.stage).toBe(i);
        for (const secret of FIXTURE_SECRETS) expect(f.text).not.toContain(secret);
      }
    },
  );

  it('the schema validator catches what the schema forbids (it is no rubber stamp)', async () => {
    const validate = await schemaValidator();
    const folder = await loadRunFolder(fixtureDir('closed'));
    const good = asReport(llmdReports(folder)[1]);
    expect(validate(good)).toBe(true);
    const broken = structuredClone(good);
    broken.results.request_performance.aggregate.latency.time_to_first_token.units = 'tok/s';
    expect(validate(broken)).toBe(false);
    const extra = structuredClone(good);
    (extra.results.request_performance.aggregate.latency as Record<string, unknown>).ttft_p50 = 1;
    expect(validate(extra)).toBe(false);
    const zero = structuredClone(good);
    zero.scenario.load.standardized.concurrency = 0;
    expect(validate(zero)).toBe(false);
    const wrongUnits = structuredClone(good);
    wrongUnits.results.request_performance.aggregate.latency.time_per_output_token.units = 'ms';
    expect(validate(wrongUnits)).toBe(true); // a valid unit the JSON schema takes ...
    expect(pydanticProblems(wrongUnits)).toEqual([
      'results.request_performance.aggregate.latency.time_per_output_token: units ms',
    ]);
  });

  it("holds servebench's figures: TTFT/TPOT/E2E summaries in ms, throughput over the complete rounds", async () => {
    const folder = await loadRunFolder(fixtureDir('closed'));
    const level = folder.record.levels[1]!;
    const r = asReport(llmdReports(folder)[1]);
    const agg = r.results.request_performance.aggregate;
    expect(agg.latency.time_to_first_token).toMatchObject({
      units: 'ms',
      mean: level.ttftMs.mean,
      p50: level.ttftMs.p50,
      p95: level.ttftMs.p95,
    });
    expect(agg.latency.time_per_output_token).toMatchObject({ units: 'ms/token', p50: level.tpotMs.p50 });
    expect(agg.latency.inter_token_latency).toMatchObject({ units: 'ms/token', p50: level.itlMs.p50 });
    expect(agg.latency.request_latency).toMatchObject({ units: 'ms', p99: level.e2eMs.p99 });
    expect(agg.requests).toMatchObject({ total: level.completed + level.failed, failures: level.failed });
    const rounds = level.rounds.filter((x) => !x.partial);
    const window = rounds.reduce((a, x) => a + x.windowMs, 0);
    expect(agg.throughput.output_token_rate.mean).toBeCloseTo(
      rounds.reduce((a, x) => a + x.outputTokPerSec * x.windowMs, 0) / window,
      9,
    );
    expect(r.scenario.load.standardized).toMatchObject({
      tool: 'servebench',
      concurrency: 4,
      input_seq_len: { value: 32 },
    });
    // A simulated run says so where llm-d shows a run (its description) and names the simulator as the engine.
    expect(r.run.description).toBe('SIMULATED: closed [c=4]');
    expect(r.scenario.stack[0]!.standardized.tool).toBe('servebench-sim');
  });

  it('names its files from the run id without a path in them, whoever wrote run.json', async () => {
    const folder = await loadRunFolder(fixtureDir(FIXTURES[0]!));
    folder.record.id = '../../etc/cron.d/x';
    for (const f of llmdReportFiles(folder)) {
      expect(f.name).not.toContain('/');
      expect(f.name.startsWith('.')).toBe(false);
    }
  });

  it('an open-loop level has its rate and no concurrency unless one capped it', async () => {
    const folder = await loadRunFolder(fixtureDir('open'));
    for (const [i, r] of llmdReports(folder).map(asReport).entries()) {
      const level = folder.record.levels[i]!;
      expect(r.scenario.load.standardized.rate_qps).toBe(level.rate);
      expect(r.scenario.load.standardized.concurrency).toBe(folder.record.config.maxConcurrency);
    }
  });

  it('--out - writes the levels as one YAML stream; a single level is one plain document', async () => {
    const folder = await loadRunFolder(fixtureDir('closed'));
    const stream = (await renderExport(findExporter('llmd-benchmark-report')!, folder)) as string;
    const docs = parseAllDocuments(stream) as Document[];
    expect(docs.map((d) => d.toJS() as unknown)).toEqual(llmdReports(folder));
    const one = structuredClone(folder);
    one.record.levels = one.record.levels.slice(0, 1);
    expect(parse((await llmdReportExporter.render(one, {})) as string).version).toBe('0.2');
  });

  it("compare reads the reports back as servebench's own figures: the same numbers, like for like", async () => {
    const folder = await loadRunFolder(fixtureDir('closed'));
    const out = join(tmp, 'closed-llmd');
    await mkdir(out, { recursive: true });
    for (const f of (await renderExportFiles(llmdReportExporter, folder))!) await writeFile(join(out, f.name), f.text);
    const back = await readCompareInput(out);
    expect(back).toHaveLength(1);
    expect(back[0]!.source).toBe('llmd-report');
    expect(new Set(Object.values(back[0]!.definitions ?? {}).map((d) => d?.match))).toEqual(new Set(['same']));
    expect(back[0]!.conditions.simulated).toBe(true);
    const c = compareSeries(await readCompareInputs([fixtureDir('closed'), out]), { replicates: 200 });
    expect(c.levels.map((l) => l.load.value)).toEqual([1, 4]);
    for (const l of c.levels)
      for (const f of l.figures) {
        expect(f.label).not.toMatch(/Benchmark Report/);
        // A Benchmark Report carries p50 to p99 of each latency: the run's p99.9 has nothing to be compared with.
        if (f.key === 'ttftP999') expect(f.value).toBeNull();
        else expect(f.ratio, `${l.load.value} ${f.key}`).toBeCloseTo(1, 9);
      }
  });

  it("a server sweep's configurations are experiments of their own: read back, one series each", async () => {
    const folder = await loadRunFolder(fixtureDir('sweep'));
    const out = join(tmp, 'sweep-llmd');
    await mkdir(out, { recursive: true });
    for (const f of (await renderExportFiles(llmdReportExporter, folder))!) await writeFile(join(out, f.name), f.text);
    const back = await readCompareInput(out);
    const own = await readCompareInput(fixtureDir('sweep'));
    expect(back.map((s) => s.levels.map((l) => l.load.value))).toEqual(
      own.map((s) => s.levels.map((l) => l.load.value)),
    );
  });

  it('the inference-perf report fixture (as llm-d converts one) is valid against the schema too', async () => {
    const validate = await schemaValidator();
    const text = await readFile(join(fixtures, 'benchmark_report_v0.2,_stage_1_lifecycle_metrics.json.yaml'), 'utf8');
    expect(validate(parse(text))).toBe(true);
  });
});
