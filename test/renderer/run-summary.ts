import type { RunSummary } from '../../src/shared/contract.js';

/** A finished run's line in the list, with what a test sets over it. */
export const runSummary = (id: string, extra: Partial<RunSummary> = {}): RunSummary => ({
  id,
  dir: `/runs/${id}`,
  label: id,
  startedAt: '2026-12-01T10:00:00Z',
  status: 'completed',
  simulated: true,
  levels: 2,
  ...extra,
});
