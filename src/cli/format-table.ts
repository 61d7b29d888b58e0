import { precisionSavedText, precisionText } from '../shared/precision.js';
import { ttftSplitText } from '../shared/ttft-split-text.js';
import { fromServer } from '../core/metrics/error-summary.js';
import { ARTICLE_COLUMNS, cellText, levelRows, levelTitle, visibleColumns } from '../shared/report-columns.js';
import { levelSpread, spreadLevelsText } from '../core/checks/combine.js';
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
 * One run-level check as a line, from the levels' own verdicts of it (their titles are the roll-up's): the status,
 * then a single level once ("warn streaming at c=1: …"), or every level and the first worst one's sentence.
 */
function problemLine(record: RunRecord, c: Check): string {
  const tag = c.status === 'fail' ? 'FAIL' : 'warn';
  const list = record.levels.flatMap((l) => {
    const check = l.checks.find((x) => x.id === c.id);
    return check ? [{ level: levelTitle(l), check }] : [];
  });
  if (list.length === 0) return `${tag} ${c.id}: ${c.detail}`;
  const spread = levelSpread(list);
  if (spread.status !== c.status) return `${tag} ${c.id}: ${c.detail}`;
  const { worst } = spread;
  const single = spread.at(c.status).length === 1 && spreadLevelsText(spread) === worst.level;
  return single
    ? `${tag} ${c.id} at ${worst.level}: ${worst.check.detail}`
    : `${tag} ${c.id} at ${spreadLevelsText(spread)} (${worst.level}: ${worst.check.detail})`;
}

/**
 * Run-level checks that did not pass, one per line; then each level cut short (and why), and the server's commonest
 * error message per level that had failures, quoted (the run-level errors check quotes only its worst level).
 */
export function formatProblems(record: RunRecord): string[] {
  const lines = record.checks.filter((c) => c.status !== 'pass').map((c) => problemLine(record, c));
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
