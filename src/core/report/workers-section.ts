import type { RunRecord } from '../../shared/run-record.js';
import { WORKER_TABLE_HEAD, WORKER_TABLE_NOTE, workerTableRows } from '../../shared/worker-table.js';
import { esc } from './html/escape.js';
import { mdText } from './markdown-escape.js';

/** The report's Workers section (distributed runs only), as Markdown lines; none for a run from one process. */
export function workersMarkdown(record: RunRecord): string[] {
  const rows = workerTableRows(record);
  if (rows.length === 0) return [];
  return [
    '## Workers',
    '',
    `| ${WORKER_TABLE_HEAD.map(mdText).join(' | ')} |`,
    `|${WORKER_TABLE_HEAD.map(() => ' --- |').join('')}`,
    ...rows.map((r) => `| ${r.map(mdText).join(' | ')} |`),
    '',
    WORKER_TABLE_NOTE,
    '',
  ];
}

/** The report's Workers section (distributed runs only), as HTML; empty for a run from one process. */
export function workersHtml(record: RunRecord): string {
  const rows = workerTableRows(record);
  if (rows.length === 0) return '';
  const head = WORKER_TABLE_HEAD.map((h) => `<th>${esc(h)}</th>`).join('');
  const body = rows.map((r) => `<tr>${r.map((v) => `<td class="nw">${esc(v)}</td>`).join('')}</tr>`).join('');
  return [
    '<section id="workers"><h2>Workers</h2>',
    `<table id="table-workers"><thead><tr>${head}</tr></thead><tbody>${body}</tbody></table>`,
    `<p class="note">${esc(WORKER_TABLE_NOTE)}</p></section>`,
  ].join('');
}
