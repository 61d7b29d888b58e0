import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { htmlReport } from '../../../src/core/report/html.js';
import { loadRunFolder } from '../../../src/core/report/load-run-folder.js';
import { reportTimelineSpec } from '../../../src/core/report/html/timeline.js';
import { TIMELINE_SCRIPTS, UPLOT_CSS } from '../../../src/core/report/html/uplot-inline.js';
import type { TimelineSpec } from '../../../src/shared/timeline-spec.js';
import { NO_CHROMIUM, findChromium, pdfExporter } from '../../../src/core/report/pdf.js';
import { EXPORTERS, REPORT_FORMATS, findExporter, renderExport } from '../../../src/core/report/registry.js';
import { summaryCsv } from '../../../src/core/report/summary-csv.js';
import { FIXTURES, fixtureDir } from './fixtures.js';

const TEXT_FORMATS = EXPORTERS.filter((e) => !e.binary).map((e) => e.format);

describe('the exporter registry', () => {
  it('lists each format once, in the order the CLI shows them', () => {
    expect(REPORT_FORMATS).toEqual(['html', 'pdf', 'md', 'csv', 'json', 'vllm-json', 'llmd-benchmark-report']);
    expect(findExporter('nope')).toBeUndefined();
  });

  it.each(FIXTURES)('renders every text format of the %s run folder', async (name) => {
    const folder = await loadRunFolder(fixtureDir(name));
    for (const format of TEXT_FORMATS) {
      const out = await renderExport(findExporter(format)!, folder);
      expect(typeof out).toBe('string');
      expect((out as string).length, format).toBeGreaterThan(100);
    }
  });
});

describe('csv', () => {
  it.each(FIXTURES)('is summary.csv as the run wrote it (%s): same columns, same values', async (name) => {
    const folder = await loadRunFolder(fixtureDir(name));
    expect(summaryCsv(folder.record)).toBe(await readFile(join(fixtureDir(name), 'summary.csv'), 'utf8'));
  });

  it('has a burst column only in runs with a trace burst, after rate; other runs keep their header', async () => {
    const closed = (await loadRunFolder(fixtureDir('closed'))).record;
    const header = (csv: string): string[] => csv.split('\n')[0]!.split(',');
    expect(header(summaryCsv(closed))).not.toContain('burst');
    const trace = structuredClone(closed);
    trace.levels[0]!.concurrency = 0;
    trace.levels[0]!.burst = 32;
    trace.levels[1]!.rate = 2.5;
    const csv = summaryCsv(trace);
    const cols = header(csv);
    expect(cols.slice(0, 5)).toEqual(['server_config', 'concurrency', 'rate', 'burst', 'input_len']);
    expect(cols).toHaveLength(header(summaryCsv(closed)).length + 1);
    const rows = csv
      .trim()
      .split('\n')
      .slice(1)
      .map((l) => l.split(','));
    // A burst has no rate; a level with a rate has no burst.
    expect(rows.map((r) => r.slice(1, 4))).toEqual([
      ['0', '', '32'],
      ['4', '2.5', ''],
    ]);
  });
});

describe('csv offered load', () => {
  it('adds offered, offered p5 (and in open loop the schedule lag p99) last, only in runs that measured them', async () => {
    const closed = (await loadRunFolder(fixtureDir('closed'))).record;
    const header = (csv: string): string[] => csv.split('\n')[0]!.split(',');
    const before = header(summaryCsv(closed));
    expect(before).not.toContain('offered');
    const measured = structuredClone(closed);
    measured.levels[0]!.offered = { inFlightMean: 0.9876, inFlightP5: 1, windowMs: 1000 };
    const csv = summaryCsv(measured);
    expect(header(csv)).toEqual([...before, 'offered', 'offered_p5']);
    const rows = csv
      .trim()
      .split('\n')
      .slice(1)
      .map((l) => l.split(','));
    // Three decimals; a level without the measure has empty cells, not a made-up 0.
    expect(rows.map((r) => r.slice(-2))).toEqual([
      ['0.988', '1'],
      ['', ''],
    ]);
    const open = (await loadRunFolder(fixtureDir('open'))).record;
    open.levels[0]!.offered = { ratePerSec: 1.96, scheduledRatePerSec: 2 };
    expect(header(summaryCsv(open)).slice(-3)).toEqual(['offered', 'offered_p5', 'schedule_lag_p99_ms']);
  });
});

describe('csv prefix cache', () => {
  it('has a prefix-cache hit-rate column only in runs that use or hit the cache, after E2E p95', async () => {
    const closed = (await loadRunFolder(fixtureDir('closed'))).record;
    const header = (csv: string): string[] => csv.split('\n')[0]!.split(',');
    expect(header(summaryCsv(closed))).not.toContain('prefix_cache_hit_rate');
    const shared = structuredClone(closed);
    shared.config.prefixGroups = 4;
    for (const level of shared.levels) level.telemetry = { ...level.telemetry!, prefixCacheHitRate: null };
    shared.levels[0]!.telemetry!.prefixCacheHitRate = 0.75;
    const csv = summaryCsv(shared);
    const cols = header(csv);
    const at = cols.indexOf('prefix_cache_hit_rate');
    expect(cols[at - 1]).toBe('e2e_p95_ms');
    const rows = csv
      .trim()
      .split('\n')
      .slice(1)
      .map((l) => l.split(','));
    // A level without engine metrics has an empty cell, not a made-up 0.
    expect(rows.map((r) => r[at])).toEqual(['0.75', '']);
  });
});

describe('markdown', () => {
  it('has the headline, the article table with one row per level, checks with reasons, cost and the command', async () => {
    const folder = await loadRunFolder(fixtureDir('closed'));
    const md = (await renderExport(findExporter('md')!, folder)) as string;
    expect(md).toMatch(/^# servebench report: closed \(SIMULATED\)/);
    expect(md).toContain('| conc | out tok/s | TTFT p50 |');
    expect(md.split('\n').filter((l) => /^\| [14] \| /.test(l))).toHaveLength(2 * 2); // results + telemetry tables
    expect(md).toMatch(/\*\*FAIL\*\* throttling: .*thermal slowdown/);
    expect(md).toContain('GPU price $2/h, average utilization 50 %');
    expect(md).toMatch(/```\n.*servebench|cli\.js sim --mimic vllm/);
  });

  it('says a cancelled run was cancelled, and an attached server is not SIMULATED', async () => {
    const cancelled = (await renderExport(findExporter('md')!, await loadRunFolder(fixtureDir('cancelled')))) as string;
    expect(cancelled).toMatch(/\*\*Status:\*\* cancelled: cancelled by the user/);
    const attach = (await renderExport(findExporter('md')!, await loadRunFolder(fixtureDir('attach')))) as string;
    expect(attach).not.toMatch(/SIMULATED/);
    expect(attach).toContain('not launched by servebench: attach');
  });
});

describe('json', () => {
  it('is the validated run record', async () => {
    const folder = await loadRunFolder(fixtureDir('sweep'));
    const json = JSON.parse((await renderExport(findExporter('json')!, folder)) as string);
    const raw = JSON.parse(await readFile(join(fixtureDir('sweep'), 'run.json'), 'utf8'));
    expect(json.levels).toEqual(raw.levels);
    expect(json.schemaVersion).toBe(1);
  });
});

describe('vllm-json', () => {
  const SUMMARY_KEYS = ['ttft', 'tpot', 'itl', 'e2el'].flatMap((m) =>
    ['mean', 'median', 'std', 'p99'].map((s) => `${s}_${m}_ms`),
  );
  const KEYS = [
    'date',
    'backend',
    'model_id',
    'tokenizer_id',
    'num_prompts',
    'max_concurrency',
    'request_rate',
    'duration',
    'completed',
    'total_input_tokens',
    'total_output_tokens',
    'request_throughput',
    'output_throughput',
    'total_token_throughput',
    'input_lens',
    'output_lens',
    'ttfts',
    'itls',
    ...SUMMARY_KEYS,
  ];

  it.each(FIXTURES)('writes one object per level with vLLM bench serve keys and units (%s)', async (name) => {
    const folder = await loadRunFolder(fixtureDir(name));
    const text = (await renderExport(findExporter('vllm-json')!, folder)) as string;
    const lines = text.trim().split('\n');
    expect(lines).toHaveLength(folder.record.levels.length);
    lines.forEach((line, i) => {
      const o = JSON.parse(line);
      const level = folder.record.levels[i]!;
      for (const key of KEYS) expect(o, key).toHaveProperty(key);
      expect(o.date).toMatch(/^\d{8}-\d{6}$/);
      expect(o.num_prompts).toBe(o.ttfts.length);
      expect(o.input_lens).toHaveLength(o.num_prompts);
      expect(o.completed).toBe(level.completed);
      // Lists in seconds, summaries in ms: the median of the per-request TTFTs matches median_ttft_ms.
      const ok = o.ttfts.filter((t: number) => t > 0).sort((a: number, b: number) => a - b);
      const mid = ok.length % 2 ? ok[(ok.length - 1) / 2] : (ok[ok.length / 2 - 1] + ok[ok.length / 2]) / 2;
      expect(mid * 1000).toBeCloseTo(o.median_ttft_ms, 1);
      expect(o.median_ttft_ms).toBe(level.ttftMs.p50);
      expect(o.request_rate).toBe(level.rate ?? 'inf');
      expect(o.max_concurrency).toBe(level.rate === undefined ? level.concurrency : 16);
    });
  });
});

/** The timeline spec a report embeds (inert JSON beside the inlined uPlot that draws it). */
function timelineOf(html: string): TimelineSpec {
  const json = /<script type="application\/json" id="servebench-timeline">(.*?)<\/script>/s.exec(html)?.[1];
  if (!json) throw new Error('no timeline spec in the report');
  return JSON.parse(json) as TimelineSpec;
}

describe('html', () => {
  it.each(FIXTURES)('is one file with every section, charts inline and nothing to fetch (%s)', async (name) => {
    const folder = await loadRunFolder(fixtureDir(name));
    const html = htmlReport(folder);
    for (const id of ['results', 'charts', 'checks', 'cost', 'command', 'environment', 'telemetry']) {
      expect(html, id).toContain(`<section id="${id}">`);
    }
    for (const id of ['chart-throughput', 'chart-ttft', 'chart-tpot', 'chart-e2e', 'chart-pareto', 'chart-timeline']) {
      expect(html, id).toContain(`id="${id}"`);
    }
    expect(html).not.toMatch(/\s(src|href)=/);
    expect(html).not.toMatch(/@import|url\(/);
    expect(html.includes('SIMULATED')).toBe(folder.record.simulated);
    const data = /<script type="application\/json" id="servebench-run">(.*?)<\/script>/s.exec(html);
    expect(JSON.parse(data![1]!).id).toBe(folder.record.id);
  });

  it('shows the diffusion parameters of a server sweep and one series per server configuration', async () => {
    const html = htmlReport(await loadRunFolder(fixtureDir('sweep')));
    expect(html).toMatch(/Diffusion<\/b>[^<]*threshold=0\.95, threshold=0\.9/);
    expect(html).toContain('output tok/s threshold=0.95');
    expect(html).toContain('output tok/s threshold=0.9');
  });

  it('says a cancelled run ended so, and still draws the timeline of what it measured', async () => {
    const html = htmlReport(await loadRunFolder(fixtureDir('cancelled')));
    expect(html).toContain('This run ended cancelled: cancelled by the user');
    expect(timelineOf(html).panels.map((p) => p.id)).toContain('ttft');
  });

  it("embeds the app's timeline spec, with thermal throttling shaded on the GPU panels and the max-clock line", async () => {
    const folder = await loadRunFolder(fixtureDir('closed'));
    const spec = timelineOf(htmlReport(folder));
    expect(spec).toEqual(JSON.parse(JSON.stringify(reportTimelineSpec(folder))));
    const clock = spec.panels.find((p) => p.id === 'sm-clock');
    expect(clock?.bands.map((b) => b.kind)).toContain('thermal');
    expect(clock?.refLines[0]?.label).toMatch(/^max SM clock/);
    expect(spec.panels.map((p) => p.id).slice(0, 3)).toEqual(['ttft', 'e2e', 'output-rate']);
  });

  it('inlines uPlot and runs only its own scripts, each allowed by its hash; nothing is fetched', async () => {
    const html = htmlReport(await loadRunFolder(fixtureDir('closed')));
    const csp = /<meta http-equiv="Content-Security-Policy" content="([^"]*)">/.exec(html)?.[1] ?? '';
    expect(csp).toMatch(/^default-src 'none';/);
    const scripts = [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => m[1] as string);
    expect(scripts).toEqual([...TIMELINE_SCRIPTS]);
    expect(scripts[0]).toContain('uPlot');
    for (const js of scripts) {
      const hash = createHash('sha256').update(js, 'utf8').digest('base64');
      expect(csp).toContain(`'sha256-${hash}'`);
    }
    expect(csp).not.toMatch(/unsafe-inline[^;]*script|script-src[^;]*unsafe/);
    expect(html).toContain(UPLOT_CSS);
    // The export's secret scrub leaves the scripts whole: a changed byte would fail its hash and draw nothing.
    const exported = (await renderExport(findExporter('html')!, await loadRunFolder(fixtureDir('closed')))) as string;
    for (const js of TIMELINE_SCRIPTS) expect(exported).toContain(`<script>${js}</script>`);
    // The one address in the page is uPlot's licence comment, never something to fetch.
    expect(new Set(html.match(/https?:\/\/[^\s"')*]+/g))).toEqual(new Set(['https://github.com/leeoniya/uPlot']));
  });

  it('keeps every foreign string of the timeline escaped: in its notes, and inert in its JSON', async () => {
    const folder = await loadRunFolder(fixtureDir('closed'));
    const evil = '<img src=x onerror=alert(1)></script><script>alert(2)</script>';
    folder.gpu = [];
    folder.record.levels[0]!.telemetry = { ...folder.record.levels[0]!.telemetry, reason: evil } as never;
    const html = htmlReport(folder);
    expect(html).not.toContain('<img src=x');
    expect(html).not.toContain('<script>alert(2)');
    expect(html).toContain('&lt;img src=x onerror=alert(1)&gt;');
    // The spec's JSON holds the text exactly, yet nothing in it can close its script element.
    const json = /<script type="application\/json" id="servebench-timeline">(.*?)<\/script>/s.exec(html)?.[1] ?? '';
    expect(json).not.toContain('<');
  });
});

describe('pdf', () => {
  it('without a browser, says in one line how to get one', async () => {
    expect(findChromium({ PATH: '' }, [])).toBeUndefined();
    const folder = await loadRunFolder(fixtureDir('open'));
    await expect(pdfExporter.render(folder, {})).rejects.toThrow(NO_CHROMIUM);
    expect(NO_CHROMIUM).toMatch(/apt-get install chromium/);
  });
});

describe('where TTFT goes', () => {
  it('is a section of the Markdown and HTML reports, one line a level with each part and its source', async () => {
    const folder = await loadRunFolder(fixtureDir('closed'));
    const level = folder.record.levels[0]!;
    level.ttftSplit = {
      basis: 'mean',
      ttftMs: 812,
      requests: 100,
      parts: [
        { part: 'queue', ms: 600, source: 'engine-metrics' },
        { part: 'prefill', ms: 150, source: 'engine-metrics' },
        { part: 'rest', ms: 62, source: 'rest' },
      ],
      unknown: [],
      restShare: 62 / 812,
    };
    const line =
      'of TTFT mean 812 ms: queue 600 (engine /metrics), prefill 150 (engine /metrics), network and client 62.0';
    const md = (await renderExport(findExporter('md')!, folder)) as string;
    expect(md).toContain('## Where TTFT goes');
    expect(md).toContain(line);
    expect(htmlReport(folder)).toContain(line);
    const plain = await loadRunFolder(fixtureDir('closed'));
    expect((await renderExport(findExporter('md')!, plain)) as string).not.toContain('Where TTFT goes');
  });
});

describe('precision', () => {
  it("is a section of the Markdown and HTML reports: each level's look and what the run saved", async () => {
    const folder = await loadRunFolder(fixtureDir('closed'));
    const level = folder.record.levels[0]!;
    level.precision = {
      rounds: 2,
      plannedRounds: level.rounds.length + 2,
      confidence: 0.99,
      figures: [{ figure: 'ttft_p95', target: 0.05, value: 100, ci: [97, 103], halfWidth: 0.03, reached: true }],
      roundCv: 0.01,
      reached: true,
    };
    const md = (await renderExport(findExporter('md')!, folder)) as string;
    expect(md).toContain('## Precision');
    expect(md).toMatch(/p95 ±3\.0 % \(asked 5\.0 %\)/);
    expect(md).toContain('precision reached after 2 of');
    expect(htmlReport(folder)).toContain('of measuring saved against the fixed plan');
  });
});
