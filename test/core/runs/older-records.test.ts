import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatLevelTable } from '../../../src/cli/format-table.js';
import { EXPORTERS, renderExport } from '../../../src/core/report/registry.js';
import { loadRunFolder } from '../../../src/core/report/load-run-folder.js';
import { summaryCsv } from '../../../src/core/report/summary-csv.js';
import { requestE2eMs, requestTtftMs } from '../../../src/shared/request-record.js';
import { FIXTURES, fixtureDir } from '../report/fixtures.js';

// The fixtures were recorded before requests stored TTFT and E2E and before summaries carried p99.9.
describe.each(FIXTURES)('a run recorded by an earlier version (%s)', (name) => {
  it('keeps its summary.csv header byte for byte, and its CLI table has no p99.9 column', async () => {
    const folder = await loadRunFolder(fixtureDir(name));
    const written = await readFile(join(fixtureDir(name), 'summary.csv'), 'utf8');
    expect(summaryCsv(folder.record).split('\n')[0]).toBe(written.split('\n')[0]);
    expect(formatLevelTable(folder.record)).not.toContain('p99.9');
  });

  it('derives TTFT and E2E of its requests on reading', async () => {
    const folder = await loadRunFolder(fixtureDir(name));
    for (const r of folder.requests) {
      expect(r.ttftMs).toBeUndefined();
      expect(requestTtftMs(r)).toBe(r.firstTokenMs === null ? null : r.firstTokenMs - r.sendMs);
      expect(requestE2eMs(r)).toBe(r.endMs === null ? null : r.endMs - r.sendMs);
    }
  });

  it('renders in every text format, with no raw float and no figure it never recorded', async () => {
    const folder = await loadRunFolder(fixtureDir(name));
    for (const exporter of EXPORTERS.filter((e) => !e.binary)) {
      const out = (await renderExport(exporter, folder, { now: () => new Date(0) })) as string;
      expect(out.length, exporter.format).toBeGreaterThan(0);
      if (exporter.format === 'md' || exporter.format === 'html') {
        // What people read: Markdown whole, the HTML report's tables (its SVG coordinates are no figures).
        const read = exporter.format === 'md' ? out : (out.match(/<table[\s\S]*?<\/table>/g) ?? []).join('');
        expect(read.length, exporter.format).toBeGreaterThan(0);
        expect(read, exporter.format).not.toMatch(/\d\.\d{7,}/);
        expect(read, exporter.format).not.toContain('p99.9');
      }
    }
  });
});
