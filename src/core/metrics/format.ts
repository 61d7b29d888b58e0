import { fmtNumber } from '../../shared/format.js';

// Check details write numbers by the one set of rules (src/shared/format.ts); these names are what the checks import.
export { fmtNumber as fmtNum, fmtShare as fmtPct } from '../../shared/format.js';

/** "a–b" for a range of numbers, or the single value when they are equal. */
export function fmtRange(values: readonly number[]): string {
  // reduce, not Math.min(...values): spreading a large array overflows the stack.
  const lo = values.reduce((a, b) => Math.min(a, b), Infinity);
  const hi = values.reduce((a, b) => Math.max(a, b), -Infinity);
  return lo === hi ? fmtNumber(lo) : `${fmtNumber(lo)}–${fmtNumber(hi)}`;
}

/** "k1 n1, k2 n2" of a count map, most frequent first. */
export function fmtCounts(counts: Record<string, number>): string {
  return Object.entries(counts)
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');
}
