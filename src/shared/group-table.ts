import { fmtNumber } from './format.js';
import { levelTitle } from './report-columns.js';
import { replicaName } from './replicas.js';
import type { GroupResult, LevelResult, RunRecord } from './run-record.js';

/** The breakdowns a level can carry beside the whole: per LoRA adapter, per replica. */
export type GroupKind = 'adapter' | 'replica';

/** Each breakdown's title and the note every view puts under it. */
export const GROUP_TABLES: Record<GroupKind, { title: string; note: string }> = {
  adapter: {
    title: 'Per LoRA adapter',
    note: "Each adapter's requests of the level: latencies over its own ok requests (ms), output tok/s over the level's complete rounds (the adapters' rates add up to the level's).",
  },
  replica: {
    title: 'Per replica',
    note: "Each replica's requests of the level, balanced by the client: latencies over its own ok requests (ms), output tok/s over the level's complete rounds (the replicas' rates add up to the level's).",
  },
};

/** Header of a breakdown table (times in ms). */
export const GROUP_TABLE_HEAD = [
  'level',
  'group',
  'requests',
  'failed',
  'TTFT p50',
  'TTFT p99',
  'TPOT p50',
  'E2E p99',
  'out tok/s',
] as const;

function groupsOf(level: LevelResult, kind: GroupKind): GroupResult[] {
  return (kind === 'adapter' ? level.byAdapter : level.byReplica) ?? [];
}

function groupName(record: RunRecord, kind: GroupKind, key: string): string {
  if (kind === 'adapter') return key;
  const index = Number(key);
  const url = record.environment.engine.replicas?.[index];
  return url === undefined ? `#${index + 1}` : replicaName(index, url);
}

/**
 * One row of cells per level and group (adapter or replica): requests, failures, TTFT, TPOT and E2E percentiles and
 * output tok/s; empty when no level has that breakdown. `name` says which level a row is.
 */
export function groupTableRows(
  record: RunRecord,
  kind: GroupKind,
  name: (level: LevelResult) => string = levelTitle,
): string[][] {
  return record.levels.flatMap((l) =>
    groupsOf(l, kind).map((g) => [
      name(l),
      groupName(record, kind, g.key),
      String(g.requests),
      String(g.failed),
      fmtNumber(g.ttftMs.p50),
      fmtNumber(g.ttftMs.p99),
      fmtNumber(g.tpotMs.p50),
      fmtNumber(g.e2eMs.p99),
      fmtNumber(g.outputTokPerSec === null ? null : Math.round(g.outputTokPerSec)),
    ]),
  );
}
