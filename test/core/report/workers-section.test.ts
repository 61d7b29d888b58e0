import { describe, expect, it } from 'vitest';
import type { WorkerLevelView } from '../../../src/shared/distributed.js';
import type { RunRecord } from '../../../src/shared/run-record.js';
import { loadRunFolder } from '../../../src/core/report/load-run-folder.js';
import { htmlReport } from '../../../src/core/report/html.js';
import { markdownReport } from '../../../src/core/report/markdown.js';
import { WORKER_TABLE_HEAD, workerTableRows } from '../../../src/shared/worker-table.js';
import { fixtureDir } from './fixtures.js';

function view(rank: number, extra: Partial<WorkerLevelView> = {}): WorkerLevelView {
  return {
    rank,
    host: `node-${rank}`,
    concurrency: 2,
    requests: 30 + rank,
    share: rank === 0 ? 0.4 : 0.6,
    offsetMs: rank === 0 ? 0 : 250.125,
    uncertaintyMs: rank === 0 ? 0 : 0.08,
    offsetChangeMs: null,
    driftPpm: null,
    loopLagP99Ms: 2,
    scheduleLagP99Ms: null,
    client: rank === 0 ? 'pass' : 'warn',
    clientCode: rank === 0 ? 'kept-up' : 'client-lag',
    startLateMs: 0,
    ...extra,
  };
}

async function distributed(): Promise<{ record: RunRecord; folder: Awaited<ReturnType<typeof loadRunFolder>> }> {
  const folder = await loadRunFolder(fixtureDir('closed'));
  const record: RunRecord = {
    ...folder.record,
    levels: folder.record.levels.map((l) => ({ ...l, workers: [view(0), view(1)] })),
  };
  return { record, folder: { ...folder, record } };
}

describe('the Workers section of a distributed run', () => {
  it("lists each worker's host, rank, share, clock offset and its uncertainty, and its own client check and code", async () => {
    const { record } = await distributed();
    const rows = workerTableRows(record);
    expect(rows).toHaveLength(2 * record.levels.length);
    const cell = (row: string[], head: (typeof WORKER_TABLE_HEAD)[number]): string =>
      row[WORKER_TABLE_HEAD.indexOf(head)]!;
    expect(cell(rows[1]!, 'worker')).toBe('1');
    expect(cell(rows[1]!, 'host')).toBe('node-1');
    expect(cell(rows[1]!, 'requests')).toBe('31');
    expect(cell(rows[1]!, 'share')).toBe('60.0 %');
    expect(cell(rows[1]!, 'load')).toBe('c=2');
    expect(cell(rows[1]!, 'offset')).toBe('250.125');
    expect(cell(rows[1]!, '± unc')).toBe('0.080');
    expect(cell(rows[1]!, 'client')).toBe('warn (client-lag)');
  });

  it('is in the HTML and Markdown reports of a distributed run, and in neither for one process', async () => {
    const { folder } = await distributed();
    const html = htmlReport(folder, new Date(0));
    expect(html).toContain('<section id="workers"><h2>Workers</h2>');
    expect(html).toContain('<td class="nw">node-1</td>');
    const md = markdownReport(folder);
    expect(md).toContain('## Workers');
    expect(md).toMatch(/\| node-1 \|/);
    const single = await loadRunFolder(fixtureDir('closed'));
    expect(htmlReport(single, new Date(0))).not.toContain('id="workers"');
    expect(markdownReport(single)).not.toContain('## Workers');
  });
});
