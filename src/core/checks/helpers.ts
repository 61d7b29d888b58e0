import { fmtRange } from '../../shared/format.js';
import type { RequestRecord } from '../../shared/request-record.js';
import { percentile } from '../metrics/percentiles.js';
import { isMeasured } from '../metrics/request-metrics.js';

/** The measured requests that completed. */
export function okMeasured(records: readonly RequestRecord[]): RequestRecord[] {
  return records.filter((r) => isMeasured(r) && r.ok);
}

/** "1 round", "2 rounds". */
export function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** How many items fall under each key. */
export function countBy<T>(items: readonly T[], key: (item: T) => string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const item of items) counts[key(item)] = (counts[key(item)] ?? 0) + 1;
  return counts;
}

/** The smallest and largest value (reduce: spreading a large array into Math.min overflows the stack). */
export function extent(values: readonly number[]): { min: number; max: number } {
  return {
    min: values.reduce((a, b) => Math.min(a, b), Infinity),
    max: values.reduce((a, b) => Math.max(a, b), -Infinity),
  };
}

/** The distinct values, ascending. */
export function distinct(values: readonly number[]): number[] {
  return [...new Set(values)].sort((a, b) => a - b);
}

/** The median (linear interpolation, as every percentile here). */
export function median(values: readonly number[]): number {
  return percentile(
    [...values].sort((a, b) => a - b),
    50,
  );
}

/** The expected lengths as a list, or as a range when there are many (multi-turn histories). */
export function fmtLengths(values: readonly number[]): string {
  const d = distinct(values);
  return d.length <= 4 ? d.join('/') : fmtRange(d);
}
