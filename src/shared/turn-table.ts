import { fmtNumber } from './format.js';
import { levelTitle } from './report-columns.js';
import type { LevelResult, RunRecord } from './run-record.js';

/** Header of the TTFT-per-turn table (ms). */
export const TURN_TABLE_HEAD = ['level', 'turn', 'n', 'in tok', 'TTFT p50', 'p95', 'p99'] as const;

/**
 * Multi-turn levels: one row of cells per level and turn (1-based), with the turn's ok request count, mean prompt
 * tokens and TTFT percentiles in ms; empty when no level ran conversations. `name` says which level a row is.
 */
export function turnTableRows(record: RunRecord, name: (level: LevelResult) => string = levelTitle): string[][] {
  return record.levels.flatMap((l) =>
    (l.byTurn ?? []).map((t) => [
      name(l),
      String(t.turn + 1),
      String(t.ttftMs.n),
      fmtNumber(t.inputTokens === null ? null : Math.round(t.inputTokens)),
      fmtNumber(t.ttftMs.p50),
      fmtNumber(t.ttftMs.p95),
      fmtNumber(t.ttftMs.p99),
    ]),
  );
}
