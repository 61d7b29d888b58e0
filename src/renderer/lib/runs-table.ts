import type { RunSummary } from '../../shared/contract.js';
import type { CheckStatus } from '../../shared/run-record.js';

/** The columns the runs table sorts by. */
export type RunSortKey = 'label' | 'model' | 'engine' | 'date' | 'peak' | 'ttft' | 'verdict';
export type SortDir = 'asc' | 'desc';

/** The runs table's columns in order, with their headers. */
export const RUN_COLUMNS: readonly { key: RunSortKey; label: string; numeric?: boolean }[] = [
  { key: 'label', label: 'Label' },
  { key: 'model', label: 'Model' },
  { key: 'engine', label: 'Engine' },
  { key: 'date', label: 'Date' },
  { key: 'peak', label: 'Peak out tok/s', numeric: true },
  { key: 'ttft', label: 'TTFT p95, first level', numeric: true },
  { key: 'verdict', label: 'Verdict' },
];

const VERDICT_RANK: Record<CheckStatus, number> = { pass: 0, warn: 1, fail: 2 };

/** A launch that failed before any level was measured: an attempt, listed apart from the runs (and cleared at once). */
export function isFailedAttempt(run: RunSummary): boolean {
  return !run.unreadable && run.status === 'failed' && run.levels === 0;
}

/** A run's verdict as the list shows it: a run that did not complete is its own status, else its checks' worst. */
export function runVerdict(run: RunSummary): CheckStatus | RunSummary['status'] | 'unreadable' {
  if (run.unreadable) return 'unreadable';
  if (run.status !== 'completed') return run.status;
  return run.headline?.verdict ?? 'pass';
}

/** The value a column sorts a run by; null sorts last whichever way. */
function sortValue(run: RunSummary, key: RunSortKey): string | number | null {
  switch (key) {
    case 'label':
      return run.label.toLowerCase();
    case 'model':
      return run.model?.toLowerCase() ?? null;
    case 'engine':
      return run.engine ?? null;
    case 'date':
      return run.startedAt;
    case 'peak':
      return run.headline?.peakOutputTokPerSec ?? null;
    case 'ttft':
      return run.headline?.firstTtftP95Ms ?? null;
    case 'verdict': {
      const v = runVerdict(run);
      // Runs that did not complete sort after every checked one.
      return v in VERDICT_RANK ? VERDICT_RANK[v as CheckStatus] : 3;
    }
  }
}

/** The runs sorted by a column (ties: newest first); missing values last in either direction. */
export function sortRuns(runs: readonly RunSummary[], key: RunSortKey, dir: SortDir): RunSummary[] {
  const sign = dir === 'asc' ? 1 : -1;
  return [...runs].sort((a, b) => {
    const x = sortValue(a, key);
    const y = sortValue(b, key);
    if (x === null || y === null) {
      if (x !== y) return x === null ? 1 : -1;
    } else if (x !== y) return (x < y ? -1 : 1) * sign;
    return b.startedAt.localeCompare(a.startedAt);
  });
}

/** The direction a header click gives: the other way on the sorted column, else a column's natural first way. */
export function nextSort(
  current: { key: RunSortKey; dir: SortDir },
  key: RunSortKey,
): { key: RunSortKey; dir: SortDir } {
  if (current.key === key) return { key, dir: current.dir === 'asc' ? 'desc' : 'asc' };
  // Newest, fastest and worst first; names A to Z; the lowest latency first.
  const dir: SortDir = key === 'date' || key === 'peak' || key === 'verdict' ? 'desc' : 'asc';
  return { key, dir };
}
