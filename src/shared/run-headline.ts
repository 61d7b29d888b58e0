import { checksByStatus, worstCheck } from './check-status.js';
import type { CheckStatus, RunRecord } from './run-record.js';

/** What a runs list shows of a run beside its name: its verdict and two headline figures. */
export interface RunHeadline {
  /** The worst of the run's checks: a run that failed a check never reads as a clean one. */
  verdict: CheckStatus;
  /** Names of the run's checks that failed, then those that warned (the verdict's reasons). */
  failed: string[];
  warned: string[];
  /** The highest output tok/s over the levels; null when no level completed a round. */
  peakOutputTokPerSec: number | null;
  /** TTFT p95 (ms) at the first level; null when it measured none. */
  firstTtftP95Ms: number | null;
}

/** A run's headline, from its record. */
export function runHeadline(record: Pick<RunRecord, 'checks' | 'levels'>): RunHeadline {
  const rates = record.levels.flatMap((l) => (l.outputTokPerSec === null ? [] : [l.outputTokPerSec]));
  const checks = record.checks ?? [];
  const by = checksByStatus(checks);
  return {
    verdict: worstCheck(checks),
    failed: by.fail,
    warned: by.warn,
    peakOutputTokPerSec: rates.length > 0 ? Math.max(...rates) : null,
    firstTtftP95Ms: record.levels[0]?.ttftMs?.p95 ?? null,
  };
}
