import type { RunRecord } from '../../shared/run-record.js';
import { csvCell } from './csv-escape.js';
import { SUMMARY_CSV_COLUMNS, cellCsv, levelRows, visibleColumns } from '../../shared/report-columns.js';

/** summary.csv: one row per level, the article's table plus conditions; a spreadsheet opens it as is. */
export function summaryCsv(record: RunRecord): string {
  const rows = levelRows(record);
  // Conditional columns (a trace's burst size) only where some level has them: other runs keep their header.
  const columns = visibleColumns(SUMMARY_CSV_COLUMNS, rows);
  const lines = [columns.map((c) => csvCell(c.key)).join(',')];
  for (const row of rows) lines.push(columns.map((c) => csvCell(cellCsv(c, row))).join(','));
  return lines.join('\n') + '\n';
}
