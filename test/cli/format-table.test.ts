import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatLevelTable, formatProblems, formatTurnTable } from '../../src/cli/format-table.js';
import {
  ARTICLE_COLUMNS,
  cellText,
  columnHeads,
  levelRows,
  levelTitle,
  visibleColumns,
} from '../../src/shared/report-columns.js';
import { fmtDurationMs } from '../../src/shared/format.js';
import type { RunRecord } from '../../src/shared/run-record.js';

const fixture = async (name: string): Promise<RunRecord> =>
  JSON.parse(await readFile(join(__dirname, '..', 'fixtures', 'runs', name, 'run.json'), 'utf8')) as RunRecord;

/** The table's cells, split where the padding is (two spaces or more; no cell holds two spaces). */
const cells = (line: string): string[] => line.trim().split(/ {2,}/);

describe('the CLI table (the shared column definitions)', () => {
  it.each(['closed', 'open', 'cancelled', 'sweep', 'attach'])(
    '%s: the same headers and cells as every other table',
    async (name) => {
      const record = await fixture(name);
      const rows = levelRows(record);
      const cols = visibleColumns(ARTICLE_COLUMNS, rows);
      const lines = formatLevelTable(record).split('\n');
      expect(lines).toHaveLength(rows.length + 1);
      expect(cells(lines[0]!)).toEqual(cols.map((c) => (c.unit ? `${c.header} (${c.unit})` : c.header)));
      rows.forEach((row, i) => expect(cells(lines[i + 1]!)).toEqual(cols.map((c) => cellText(c, row))));
    },
  );

  it('keeps its look: right-aligned, latencies with their unit, * for a level cut short, — for no throughput', async () => {
    const record = await fixture('closed');
    const level = record.levels[0]!;
    const slow: RunRecord = {
      ...record,
      levels: [
        { ...level, e2eMs: { ...level.e2eMs, p50: 2070, p95: 12345.6 } },
        { ...level, concurrency: 16, partial: true, outputTokPerSec: null },
      ],
    };
    const [head, first, second] = formatLevelTable(slow).split('\n');
    expect(cells(head!)).toEqual(expect.arrayContaining(['conc', 'out tok/s', 'TTFT p50', 'E2E p95', 'checks']));
    // Milliseconds grouped by thousands, seconds past ten of them: the cell says which.
    expect(first).toContain('2,070 ms');
    expect(first).toContain('12.3 s');
    expect(second).toMatch(/^\s+16\s+—\*\s/);
    // Every line but the last cell is padded to the same width.
    expect(head!.indexOf('out tok/s') + 'out tok/s'.length).toBe(second!.indexOf('—*') + '—*'.length);
  });

  it('shows the load really offered beside the asked one once a run measured it', async () => {
    const record = await fixture('closed');
    expect(formatLevelTable(record).split('\n')[0]).not.toContain('offered');
    record.levels[0]!.offered = { inFlightMean: 0.987, inFlightP5: 1 };
    record.levels[1]!.offered = { inFlightMean: 9.1, inFlightP5: 4 };
    const [head, first, second] = formatLevelTable(record).split('\n');
    expect(cells(head!).slice(0, 2)).toEqual(['conc', 'offered']);
    expect(cells(first!).slice(1, 2)).toEqual(['0.987 (p5 1)']);
    expect(cells(second!).slice(1, 2)).toEqual(['9.1 (p5 4)']);
    const open = await fixture('open');
    open.levels[0]!.offered = { ratePerSec: 1.96, scheduledRatePerSec: 2 };
    const line = formatLevelTable(open).split('\n')[1]!;
    expect(line).toContain(`1.96/s, lag p99 ${fmtDurationMs(open.levels[0]!.scheduleLagMs?.p99)}`);
  });

  it('open loop shows the rate with its unit instead of the concurrency', async () => {
    const head = formatLevelTable(await fixture('open')).split('\n')[0]!;
    expect(head).toMatch(/^rate \(req\/s\) {2}out tok\/s/);
    expect(head).not.toContain('conc');
  });

  it('a trace whose arrivals share one time shows a burst, never a rate', async () => {
    const record = await fixture('open');
    const { rate: _rate, ...level } = record.levels[0]!;
    const burst: RunRecord = { ...record, levels: [{ ...level, concurrency: 0, burst: 3 }] };
    const [head, row] = formatLevelTable(burst).split('\n');
    expect(cells(head!)[0]).toBe('arrivals');
    expect(cells(row!)[0]).toBe('burst of 3 at once');
    expect(head).not.toMatch(/rate|conc/);
    expect(levelTitle(burst.levels[0]!)).toMatch(/^burst of 3 at once /);
  });
});

describe('the app table header (columnHeads)', () => {
  it('puts TTFT, TPOT and E2E over their percentiles and the rest across both rows', async () => {
    const record = await fixture('closed');
    const { top, sub } = columnHeads(visibleColumns(ARTICLE_COLUMNS, levelRows(record)));
    expect(top.map((h) => [h.label, h.span])).toEqual([
      ['conc', 0],
      ['out tok/s', 0],
      ['TTFT', 2],
      ['TPOT', 2],
      ['E2E', 2],
      ['$/1M out', 0],
      ['$/1M out at util.', 0],
      ['checks', 0],
    ]);
    expect(sub.map((h) => h.label)).toEqual(['p50', 'p95', 'p50', 'p95', 'p50', 'p95']);
  });
});

describe('the CLI table of TTFT per turn (multi-turn)', () => {
  it('has a row per level and turn with n, prompt tokens and TTFT percentiles; none for single-request runs', async () => {
    const record = await fixture('closed');
    expect(formatTurnTable(record)).toBeNull();
    const level = record.levels[0]!;
    const summary = (p50: number) => ({ ...level.ttftMs, n: 4, p50, p95: p50 + 1, p99: p50 + 2 });
    const turns: RunRecord = {
      ...record,
      levels: [
        {
          ...level,
          concurrency: 2,
          byTurn: [
            { turn: 0, inputTokens: 40, ttftMs: summary(10) },
            { turn: 1, inputTokens: 86, ttftMs: summary(6.25) },
          ],
        },
      ],
    };
    const lines = formatTurnTable(turns)!.split('\n').map(cells);
    expect(lines).toEqual([
      ['level', 'turn', 'n', 'in tok', 'TTFT p50', 'p95', 'p99'],
      ['c=2', '1', '4', '40', '10', '11', '12'],
      ['c=2', '2', '4', '86', '6.25', '7.25', '8.25'],
    ]);
  });
});

describe('the CLI problem lines', () => {
  it('say the status and a single level once each, and keep every level when there are several', async () => {
    const cancelled = formatProblems(await fixture('cancelled'));
    expect(cancelled).toContain(
      'warn sample-size at c=1 32/64: 3 TTFT samples are too few for a 95.0 % confidence interval (p95 needs 59, ' +
        'p99 needs 299): treat those percentiles as rough, or run more requests',
    );
    expect(cancelled.join('\n')).not.toMatch(/warn [a-z-]+: warn at/);
    const sweep = formatProblems(await fixture('sweep'));
    expect(sweep).toContainEqual(
      expect.stringMatching(
        /^warn sample-size at c=1 32\/16 threshold=0\.95, c=2 32\/16 threshold=0\.95, .* \(c=1 32\/16 threshold=0\.95: 16 TTFT samples/,
      ),
    );
    const closed = formatProblems(await fixture('closed'));
    expect(closed).toContainEqual(expect.stringMatching(/^FAIL round-spread at c=1 32\/16: CV 39\.8 % over 2 rounds/));
  });

  it("come from the levels' own verdicts, not from the roll-up's sentence", async () => {
    const record = await fixture('closed');
    const expected = formatProblems(record);
    for (const c of record.checks) if (record.levels.some((l) => l.checks.some((x) => x.id === c.id))) c.detail = '?';
    expect(formatProblems(record)).toEqual(expected);
    expect(expected).toContainEqual(expect.stringMatching(/^FAIL round-spread at c=1 32\/16: CV 39\.8 %/));
  });
});
