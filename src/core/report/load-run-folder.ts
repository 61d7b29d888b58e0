import type { RequestRecord } from '../../shared/request-record.js';
import type { RunFolder } from '../run-folder/load-folder.js';

// Exporters read a run folder through run-folder/ (one streaming reader, one line and redaction policy).
export { loadRunFolder, type RunFolder } from '../run-folder/load-folder.js';
export { recordSecrets, sanitizeRecord } from '../run-folder/redact-folder.js';
/** Reads and validates run.json: one clear line for a missing file, a damaged file or a newer servebench's file. */
export { loadRun as readRunRecord } from '../run-folder/run-json.js';

/**
 * The requests of each level of the record, in the record's order. requests.jsonl numbers levels as they were
 * planned, and a level cancelled before it measured anything has no entry in run.json: match by time, not index.
 */
export function requestsByLevel(folder: RunFolder): RequestRecord[][] {
  const groups = new Map<number, RequestRecord[]>();
  for (const r of folder.requests) {
    const g = groups.get(r.levelIndex);
    if (g) g.push(r);
    else groups.set(r.levelIndex, [r]);
  }
  return folder.record.levels.map((level, i) => {
    const byIndex = groups.get(i);
    const inside = (g: RequestRecord[] | undefined): boolean =>
      !!g && g.length > 0 && g.every((r) => r.sendMs >= level.startMs - 1 && r.sendMs <= level.endMs + 1);
    if (inside(byIndex)) return byIndex as RequestRecord[];
    for (const g of groups.values()) if (inside(g)) return g;
    return [];
  });
}
