import type { Exporter } from './exporter.js';
import {
  ARTICLE_COLUMNS,
  TELEMETRY_COLUMNS,
  cellText,
  levelRows,
  variantLabel,
  visibleColumns,
} from '../../shared/report-columns.js';
import type { Column, LevelRow } from '../../shared/report-columns.js';
import { costLines, environmentFacts, headlineFacts, sortedChecks } from './facts.js';
import type { RunFolder } from './load-run-folder.js';
import { capacitySearches } from '../../shared/capacity.js';
import { capacityLines, capacityTable, capacityTitle } from '../../shared/capacity-format.js';
import { TURN_TABLE_HEAD, turnTableRows } from '../../shared/turn-table.js';
import { GROUP_TABLE_HEAD, GROUP_TABLES, groupTableRows } from '../../shared/group-table.js';
import { workersMarkdown } from './workers-section.js';
import { TTFT_SPLIT_NOTE, ttftSplitRows } from '../../shared/ttft-split-text.js';
import { precisionSavedText, precisionText } from '../../shared/precision.js';
import { loadText } from '../../shared/level-load.js';
import { messageRows, messagesLeftOutText } from '../../shared/message-rows.js';
import { mdCodeBlock, mdText as esc } from './markdown-escape.js';

function table(columns: readonly Column[], rows: readonly LevelRow[]): string {
  const cols = visibleColumns(columns, rows);
  const head = `| ${cols.map((c) => esc(c.unit ? `${c.header} (${c.unit})` : c.header)).join(' | ')} |`;
  const rule = `|${cols.map(() => ' --- |').join('')}`;
  const body = rows.map((r) => `| ${cols.map((c) => esc(cellText(c, r))).join(' | ')} |`);
  return [head, rule, ...body].join('\n');
}

/** "Messages during the run": severity, time since the start, where and text; nothing when the run said none. */
function messagesSection(record: RunFolder['record']): string[] {
  const rows = messageRows(record);
  if (rows.length === 0) return [];
  const lines = rows.map(
    (m) =>
      `- **${esc(m.severity.toUpperCase())}** ${esc(m.time)}${m.where ? ` (${esc(m.where)})` : ''}: ${esc(m.text)}${m.count ? ` (×${m.count})` : ''}`,
  );
  const leftOut = messagesLeftOutText(record);
  return ['', '## Messages during the run', '', ...lines, ...(leftOut ? ['', `_${esc(leftOut)}._`] : [])];
}

/** The report as Markdown: headline, the article's table, checks, cost, command, environment, telemetry. */
export function markdownReport(folder: RunFolder): string {
  const { record } = folder;
  const rows = levelRows(record);
  const out: string[] = [];
  out.push(`# servebench report: ${esc(record.label)}${record.simulated ? ' (SIMULATED)' : ''}`, '');
  if (record.simulated) out.push('> **SIMULATED**: these numbers come from the built-in simulator, not a GPU.', '');
  for (const f of headlineFacts(record)) out.push(`- **${esc(f.label)}:** ${esc(f.value)}`);
  out.push('', '## Results', '');
  out.push(rows.length ? table(ARTICLE_COLUMNS, rows) : '_No level was measured._');
  out.push('', '* = level cut short.', '');
  const splits = ttftSplitRows(record);
  if (splits.length) {
    out.push('## Where TTFT goes', '', ...splits.map((s) => `- ${esc(s.level)}: ${esc(s.text)}`), '');
    out.push(esc(TTFT_SPLIT_NOTE), '');
  }
  const saved = precisionSavedText(record.levels);
  if (saved) {
    const lines = record.levels.map((l) => `- ${esc(loadText(l, true))}: ${esc(precisionText(l) ?? '')}`);
    out.push('## Precision', '', ...lines, '', esc(saved), '');
  }
  const turns = turnTableRows(record);
  if (turns.length) {
    out.push('## TTFT per conversation turn', '', `| ${TURN_TABLE_HEAD.map(esc).join(' | ')} |`);
    out.push(
      `|${TURN_TABLE_HEAD.map(() => ' --- |').join('')}`,
      ...turns.map((r) => `| ${r.map(esc).join(' | ')} |`),
      '',
    );
    out.push('Multi-turn: each turn sends the conversation so far back; TTFT in ms.', '');
  }
  for (const kind of ['adapter', 'replica'] as const) {
    const groups = groupTableRows(record, kind);
    if (groups.length === 0) continue;
    out.push(`## ${GROUP_TABLES[kind].title}`, '', `| ${GROUP_TABLE_HEAD.map(esc).join(' | ')} |`);
    out.push(
      `|${GROUP_TABLE_HEAD.map(() => ' --- |').join('')}`,
      ...groups.map((r) => `| ${r.map(esc).join(' | ')} |`),
      '',
      esc(GROUP_TABLES[kind].note),
      '',
    );
  }
  out.push(...workersMarkdown(record));
  const searches = capacitySearches(record);
  if (searches.length > 0) out.push('## Capacity', '');
  for (const c of searches) {
    const { header, rows: probes } = capacityTable(c);
    const title = searches.length > 1 ? capacityTitle(c) : null;
    if (title) out.push(`### ${esc(title)}`, '');
    out.push(...capacityLines(c).map((l) => `- ${esc(l)}`), '');
    out.push(`| ${header.map(esc).join(' | ')} |`, `|${header.map(() => ' --- |').join('')}`);
    out.push(...probes.map((r) => `| ${r.map(esc).join(' | ')} |`), '');
  }
  if (searches.length > 0) {
    out.push(
      'A level meets an SLO only when the percentile’s 95 % interval lies within it, fails when it lies above.',
      '',
    );
  }
  out.push('## Checks', '');
  for (const c of sortedChecks(record.checks))
    out.push(`- **${esc(c.status.toUpperCase())}** ${esc(c.id)}: ${esc(c.detail)}`);
  const levelProblems = record.levels.flatMap((l) =>
    l.checks
      .filter((c) => c.status !== 'pass')
      .map(
        (c) =>
          `- ${esc(loadText(l, true))}${l.serverVariant ? ` (${esc(variantLabel(l))})` : ''}: **${esc(c.status.toUpperCase())}** ${esc(c.id)}: ${esc(c.detail)}`,
      ),
  );
  if (levelProblems.length) out.push('', '### Per level', '', ...levelProblems);
  out.push(...messagesSection(record));
  out.push('', '## Cost', '', ...costLines(record).map(esc));
  out.push('', '## Server command', '');
  out.push(
    ...mdCodeBlock(
      record.environment.engine.command ?? `(not launched by servebench: ${record.environment.engine.kind})`,
    ),
  );
  out.push('', '## Environment', '');
  for (const f of environmentFacts(record)) out.push(`- **${esc(f.label)}:** ${esc(f.value)}`);
  out.push('', '## Telemetry per level', '');
  out.push(rows.length ? table(TELEMETRY_COLUMNS, rows) : '_No level was measured._');
  if (folder.notes.length) out.push('', '## Notes', '', ...folder.notes.map((n) => `- ${esc(n)}`));
  out.push('', `_Run ${esc(record.id)}, servebench ${esc(record.environment.servebenchVersion)}._`, '');
  return out.join('\n');
}

export const markdownExporter: Exporter = {
  format: 'md',
  extension: '.md',
  mediaType: 'text/markdown',
  binary: false,
  description: 'Markdown: the headline, the table, checks, messages, cost, command and environment',
  render: async (folder) => markdownReport(folder),
};
