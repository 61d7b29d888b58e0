import { precisionSavedText, precisionText } from '../shared/precision.js';
import { ttftSplitText } from '../shared/ttft-split-text.js';
import { fromServer } from '../core/metrics/error-summary.js';
import { ARTICLE_COLUMNS, cellText, levelRows, visibleColumns } from '../shared/report-columns.js';
import type { Column } from '../shared/report-columns.js';
import type { Check, LevelResult, RunRecord } from '../shared/run-record.js';
import { TURN_TABLE_HEAD, turnTableRows } from '../shared/turn-table.js';
import { GROUP_TABLE_HEAD, groupTableRows, type GroupKind } from '../shared/group-table.js';
import { WORKER_TABLE_HEAD, workerTableRows } from '../shared/worker-table.js';
import { lengthsText, loadText } from '../shared/level-load.js';

function pad(cells: string[][]): string {
  const widths = cells[0]!.map((_, i) => Math.max(...cells.map((row) => (row[i] ?? '').length)));
  return cells
    .map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padStart(widths[i] ?? 0))).join('  '))
    .join('\n');
}

/** A header for the terminal: a unit beside the name (latency cells carry their own). */
const head = (c: Column): string => (c.unit ? `${c.header} (${c.unit})` : c.header);

/** The article's table from the shared column definitions: one row per level. */
export function formatLevelTable(record: RunRecord): string {
  const rows = levelRows(record);
  const cols = visibleColumns(ARTICLE_COLUMNS, rows);
  return pad([cols.map(head), ...rows.map((r) => cols.map((c) => cellText(c, r)))]);
}

/** Multi-turn levels: TTFT per turn (the history grows, the prefix cache serves it), one row per level and turn. */
export function formatTurnTable(record: RunRecord): string | null {
  const rows = turnTableRows(record, (l) => levelName(record, l));
  return rows.length > 0 ? pad([[...TURN_TABLE_HEAD], ...rows]) : null;
}

/** The level per LoRA adapter or per replica, one row per level and group; null when no level has that breakdown. */
export function formatGroupTable(record: RunRecord, kind: GroupKind): string | null {
  const rows = groupTableRows(record, kind, (l) => levelName(record, l));
  return rows.length > 0 ? pad([[...GROUP_TABLE_HEAD], ...rows]) : null;
}

/** Distributed runs: each worker's share, clock offset and client check, one row per level and worker. */
export function formatWorkerTable(record: RunRecord): string | null {
  const rows = workerTableRows(record, (l) => levelName(record, l));
  return rows.length > 0 ? pad([[...WORKER_TABLE_HEAD], ...rows]) : null;
}

/** How a level is named in the last lines: its load, and its lengths or server setup when those vary. */
function levelName(record: RunRecord, l: LevelResult): string {
  const load = loadText(l);
  const many = new Set(record.levels.map((x) => `${x.serverConfigIndex}|${x.inputLen}|${x.outputLen}`)).size > 1;
  return many ? `${load} ${lengthsText(l)}${l.serverConfigIndex > 0 ? ` #${l.serverConfigIndex}` : ''}` : load;
}

/** Where each level's TTFT went, one line a level ("c=16: of TTFT mean 216 ms: queue 120 (engine /metrics), ..."). */
export function formatTtftSplits(record: RunRecord): string[] {
  return record.levels.flatMap((l) => (l.ttftSplit ? [`${levelName(record, l)}: ${ttftSplitText(l.ttftSplit)}`] : []));
}

/** Each level's --precision line, then what the run saved against its fixed plan; nothing without --precision. */
export function formatPrecision(record: RunRecord): string[] {
  const lines = record.levels.flatMap((l) => {
    const text = precisionText(l);
    return text ? [`${levelName(record, l)}: ${text}`] : [];
  });
  const saved = precisionSavedText(record.levels);
  return saved ? [...lines, saved] : lines;
}

/**
 * One run-level check as a line. Its detail ("warn at c=1 (c=1: …)") repeats the status and, for one level, the
 * level: the line says each once ("warn streaming at c=1: …").
 */
function problemLine(c: Check): string {
  const tag = c.status === 'fail' ? 'FAIL' : 'warn';
  const lead = `${c.status} at `;
  if (!c.detail.startsWith(lead)) return `${tag} ${c.id}: ${c.detail}`;
  const rest = c.detail.slice(lead.length);
  const single = /^([^(;]+?) \(\1: (.*)\)$/s.exec(rest);
  return single ? `${tag} ${c.id} at ${single[1]}: ${single[2]}` : `${tag} ${c.id} at ${rest}`;
}

/**
 * Run-level checks that did not pass, one per line; then each level cut short (and why), and the server's commonest
 * error message per level that had failures, quoted (the run-level errors check quotes only its worst level).
 */
export function formatProblems(record: RunRecord): string[] {
  const lines = record.checks.filter((c) => c.status !== 'pass').map(problemLine);
  for (const l of record.levels) {
    const name = levelName(record, l);
    if (l.partial) {
      const why = l.cutShort ? `: ${l.cutShort}` : '';
      lines.push(`${name} cut short${why}${l.outputTokPerSec === null ? ' (no throughput: no round completed)' : ''}`);
    }
    if (l.topError && l.failed > 0) {
      const who = fromServer(l.topError) ? 'server said' : 'error';
      lines.push(`${name}: ${l.failed} failed; ${who} (${l.topError.count}×): "${l.topError.message}"`);
    }
  }
  return lines;
}
