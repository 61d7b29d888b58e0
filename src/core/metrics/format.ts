/** Number for a human check detail: whole numbers from 100 up, else 3 significant digits. */
export function fmtNum(x: number): string {
  if (!Number.isFinite(x)) return String(x);
  if (Math.abs(x) >= 100) return String(Math.round(x));
  return String(Number(x.toPrecision(3)));
}

/** A 0..1 share as a percentage with one decimal, e.g. "12.5 %". */
export function fmtPct(share: number): string {
  return `${(share * 100).toFixed(1)} %`;
}

/** "a–b" for a range of integers, or the single value when they are equal. */
export function fmtRange(values: readonly number[]): string {
  // reduce, not Math.min(...values): spreading a large array overflows the stack.
  const lo = values.reduce((a, b) => Math.min(a, b), Infinity);
  const hi = values.reduce((a, b) => Math.max(a, b), -Infinity);
  return lo === hi ? fmtNum(lo) : `${fmtNum(lo)}–${fmtNum(hi)}`;
}

/** "k1 n1, k2 n2" of a count map, most frequent first. */
export function fmtCounts(counts: Record<string, number>): string {
  return Object.entries(counts)
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');
}
