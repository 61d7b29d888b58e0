import type { RunRecord } from '../../shared/run-record.js';
import { SUMMARY_CSV_COLUMNS, cellCsv, levelRows } from '../../shared/report-columns.js';

function csvCell(value: string): string {
  return /[",\n\r]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

/** summary.csv: one row per level, the article's table plus conditions; a spreadsheet opens it as is. */
export function summaryCsv(record: RunRecord): string {
  const lines = [SUMMARY_CSV_COLUMNS.map((c) => c.key).join(',')];
  for (const row of levelRows(record)) lines.push(SUMMARY_CSV_COLUMNS.map((c) => csvCell(cellCsv(c, row))).join(','));
  return lines.join('\n') + '\n';
}
