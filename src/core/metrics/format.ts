import { fmtNumber, fmtShare } from '../../shared/format.js';

/** A number in a check detail, by the one set of rules (src/shared/format.ts); one argument, so `map(fmtNum)` works. */
export const fmtNum = (x: number): string => fmtNumber(x);

/** A 0..1 share with one decimal ("12.5 %"): check details compare it with a bound written the same way. */
export const fmtPct = (share: number): string => fmtShare(share, 1);

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
