import type { RunSummary } from '../../shared/contract.js';

/** True when every word of the filter is in the run's model, engine, label or id (case ignored). */
export function matchesRunFilter(run: RunSummary, filter: string): boolean {
  const words = filter.toLowerCase().split(/\s+/).filter(Boolean);
  if (words.length === 0) return true;
  const hay = [run.model, run.engine, run.label, run.id].filter(Boolean).join(' ').toLowerCase();
  return words.every((w) => hay.includes(w));
}
