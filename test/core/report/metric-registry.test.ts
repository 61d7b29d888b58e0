import { readFile, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { formatLevelTable } from '../../../src/cli/format-table.js';
import { outcomeToRecord } from '../../../src/core/load/outcome-to-record.js';
import { StreamAccumulator } from '../../../src/core/load/stream-accumulator.js';
import { benchConfigFromFlags } from '../../../src/cli/run-options.js';
import { compareSeries } from '../../../src/core/report/compare/compare.js';
import { compareMarkdown } from '../../../src/core/report/compare/markdown.js';
import { readCompareInputs } from '../../../src/core/report/compare/read-input.js';
import { compareText } from '../../../src/core/report/compare/text.js';
import { htmlReport } from '../../../src/core/report/html.js';
import { jsonExporter } from '../../../src/core/report/json.js';
import { loadRunFolder } from '../../../src/core/report/load-run-folder.js';
import type { RunFolder } from '../../../src/core/report/load-run-folder.js';
import { markdownReport } from '../../../src/core/report/markdown.js';
import { summaryCsv } from '../../../src/core/report/summary-csv.js';
import { vllmJson } from '../../../src/core/report/vllm-json.js';
import { parseSloTargets, sloTargetText } from '../../../src/shared/capacity.js';
import { METRICS, metric } from '../../../src/shared/metrics.js';
import { ARTICLE_COLUMNS, columnHeads, levelRows, visibleColumns } from '../../../src/shared/report-columns.js';
import type { Ci, LevelResult, RunRecord } from '../../../src/shared/run-record.js';
import { judgeSlo } from '../../../src/shared/slo-judge.js';
import { fixtureCopy, fixtureDir } from './fixtures.js';

const made: string[] = [];
afterAll(async () => {
  for (const d of made) await rm(dirname(d), { recursive: true, force: true });
});

/** A level whose TTFT summary holds enough samples for p99.9 (the fixture's were recorded before it existed). */
const withP999 = (l: LevelResult, p999: number, ci: Ci = [p999 - 5, p999 + 5]): LevelResult => ({
  ...l,
  ttftMs: { ...l.ttftMs, n: 4000, p999, p999Ci: ci },
});

async function folderWithP999(): Promise<RunFolder> {
  const folder = await loadRunFolder(fixtureDir('closed'));
  return { ...folder, record: { ...folder.record, levels: folder.record.levels.map((l, i) => withP999(l, 40 + i)) } };
}

describe('TTFT p99.9: one registry entry, shown everywhere a figure is', () => {
  it('is one entry of the registry, with its SLO name and vLLM key', () => {
    const m = metric('ttft_p999_ms');
    expect(m).toMatchObject({ label: 'TTFT p99.9', unit: 'ms', direction: 'lower', slo: 'ttft_p99.9' });
    // vllm/benchmarks/serve.py: p_word = str(int(p)) if int(p) == p else str(p); key p{p_word}_ttft_ms.
    expect(m.vllmKey).toBe('p99.9_ttft_ms');
    expect(METRICS.filter((x) => x.label === 'TTFT p99.9')).toHaveLength(1);
  });

  it('in the CLI table and the app results table (the same columns and two-row header)', async () => {
    const { record } = await folderWithP999();
    const head = formatLevelTable(record).split('\n')[0]!;
    expect(head).toContain('TTFT p99.9');
    expect(formatLevelTable(record).split('\n')[1]).toContain('40 ms');
    const { top, sub } = columnHeads(visibleColumns(ARTICLE_COLUMNS, levelRows(record)));
    expect(top.find((h) => h.label === 'TTFT')?.span).toBe(3);
    expect(sub.map((h) => h.label).slice(0, 3)).toEqual(['p50', 'p95', 'p99.9']);
    // A run too short for a p99.9 (fewer than 1000 samples at every level) keeps its table as it was.
    const fixture = (await loadRunFolder(fixtureDir('closed'))).record;
    expect(formatLevelTable(fixture)).not.toContain('p99.9');
  });

  it('in every export: Markdown, CSV, JSON, HTML and vLLM JSON', async () => {
    const folder = await folderWithP999();
    expect(markdownReport(folder)).toContain('| TTFT p99.9 |');
    const [header, row] = summaryCsv(folder.record).split('\n');
    const col = header!.split(',').indexOf('ttft_p999_ms');
    expect(col).toBeGreaterThan(0);
    expect(row!.split(',')[col]).toBe('40');
    const json = JSON.parse((await jsonExporter.render(folder, {})) as string) as RunRecord;
    expect(json.levels[0]!.ttftMs.p999).toBe(40);
    expect(htmlReport(folder, new Date(0))).toMatch(/<th[^>]*>TTFT p99\.9<\/th>.*<td[^>]*>40 ms<\/td>/s);
    const lines = vllmJson(folder).trim().split('\n');
    expect(lines.map((l) => (JSON.parse(l) as Record<string, unknown>)['p99.9_ttft_ms'])).toEqual([40, 41]);
  });

  it("keeps old runs' summary.csv header: the column comes only where a level measured it", async () => {
    const csv = await readFile(join(fixtureDir('closed'), 'summary.csv'), 'utf8');
    const { record } = await loadRunFolder(fixtureDir('closed'));
    expect(summaryCsv(record).split('\n')[0]).toBe(csv.split('\n')[0]);
  });

  it('in compare: its own row, from the requests of each side', async () => {
    const copy = await fixtureCopy('closed');
    made.push(copy);
    const c = compareSeries(await readCompareInputs([fixtureDir('closed'), copy]), { replicates: 200 });
    for (const level of c.levels) {
      const f = level.figures.find((x) => x.key === 'ttftP999');
      expect(f).toMatchObject({ label: 'TTFT p99.9', unit: 'ms' });
      expect(f!.ratio).toBeCloseTo(1, 9);
    }
    expect(compareMarkdown(c)).toContain('TTFT p99.9');
    expect(compareText(c)).toContain('TTFT p99.9');
  });

  it('in --slo: ttft_p99.9=MS parses, is judged on its interval, and names itself', async () => {
    const parsed = parseSloTargets('ttft_p99.9=50,tpot_p95=20');
    expect(parsed).toEqual({
      ok: true,
      targets: [
        { metric: 'ttft', percentile: 99.9, limitMs: 50 },
        { metric: 'tpot', percentile: 95, limitMs: 20 },
      ],
    });
    if (!parsed.ok) return;
    const target = parsed.targets[0]!;
    expect(sloTargetText(target)).toBe('ttft_p99.9≤50 ms');
    const level = (await loadRunFolder(fixtureDir('closed'))).record.levels[0]!;
    const ok = { ...level, failed: 0 };
    expect(judgeSlo(withP999(ok, 40, [38, 45]), target).verdict).toBe('meets');
    expect(judgeSlo(withP999(ok, 52, [48, 55]), target).verdict).toBe('uncertain');
    expect(judgeSlo(withP999(ok, 70, [60, 80]), target).verdict).toBe('fails');
    // Too few samples for its interval: uncertain, never met by a guess.
    expect(judgeSlo({ ...ok, ttftMs: { ...ok.ttftMs, p999: 10, p999Ci: null } }, target).verdict).toBe('uncertain');
    expect(benchConfigFromFlags({ slo: 'ttft_p99.9=50' }, {}).slo?.targets).toBe('ttft_p99.9=50');
    expect(() => benchConfigFromFlags({ slo: 'ttft_p99.99=50' }, {})).toThrow(/ttft_p99\.9/);
  });
});

describe('request records store TTFT and E2E; older records still read', () => {
  it('writes both when the request is recorded', () => {
    const acc = new StreamAccumulator();
    const chunk = { id: 'c', object: 'chat.completion.chunk', model: 'm', created: 1 };
    acc.onEvent(
      JSON.stringify({ ...chunk, choices: [{ index: 0, finish_reason: 'stop', delta: { content: 'x' } }] }),
      5,
    );
    const outcome = { id: 1, requestTag: 't-1', sendMs: 2, endMs: 9, httpStatus: 200, result: acc.result() };
    const record = outcomeToRecord(outcome, { levelIndex: 0, round: 0, expectedIn: 1, expectedOut: 1 });
    expect(record).toMatchObject({ firstTokenMs: 5, ttftMs: 3, e2eMs: 7 });
  });

  it('derives them in one place for a record without them, and vLLM JSON lists the same figures', async () => {
    const folder = await loadRunFolder(fixtureDir('closed'));
    const r = folder.requests.find((x) => x.ok && !x.warmup)!;
    expect(r.ttftMs).toBeUndefined();
    const stored = { ...r, ttftMs: 1234, e2eMs: 5678 };
    const { requestTtftMs, requestE2eMs } = await import('../../../src/shared/request-record.js');
    expect(requestTtftMs(r)).toBe((r.firstTokenMs as number) - r.sendMs);
    expect(requestE2eMs(r)).toBe((r.endMs as number) - r.sendMs);
    expect([requestTtftMs(stored), requestE2eMs(stored)]).toEqual([1234, 5678]);
    const again = { ...folder, requests: folder.requests.map((x) => (x === r ? stored : x)) };
    const ttfts = vllmJson(again)
      .trim()
      .split('\n')
      .flatMap((l) => (JSON.parse(l) as { ttfts: number[] }).ttfts);
    expect(ttfts).toContain(1.234);
  });
});
