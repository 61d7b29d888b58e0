import { fmtNumber, fmtRatio } from '../../../shared/format.js';
import { NOT_RECORDED } from './compare.js';
import type { Comparison, FigureComparison, LevelComparison, LikeForLike } from './compare.js';
import type { CompareSeries } from './types.js';

/** "[-1.2, 3.4] ms". */
export function fmtDiffCi(f: FigureComparison): string {
  if (!f.interval) return '—';
  const [lo, hi] = f.interval.diff;
  return `[${lo >= 0 ? '+' : ''}${fmtNumber(lo)}, ${hi >= 0 ? '+' : ''}${fmtNumber(hi)}] ${f.unit}`;
}

/** "[0.91×, 1.10×]". */
export function fmtRatioCi(f: FigureComparison): string {
  const r = f.interval?.ratio;
  return r ? `[${fmtRatio(r[0])}, ${fmtRatio(r[1])}]` : '—';
}

/** One sentence on how a series' conditions stand against the baseline's. */
export function likeForLikeText(l: LikeForLike, s: CompareSeries, base: CompareSeries): string {
  const unknown = l.unknown.length ? ` Not recorded on one side: ${l.unknown.join(', ')}.` : '';
  const pair = `${s.label} against ${base.label}`;
  const none = l.noCommonLevel ? ' No load was measured by both, so nothing is compared.' : '';
  if (l.differs.length === 0)
    return l.noCommonLevel
      ? `${pair}: the same recorded conditions, but not like for like:${none}${unknown}`
      : `${pair}: like for like, every condition recorded on both sides the same.${unknown}`;
  if (l.differs.length === 1)
    return `${pair}: differs in one condition, ${l.differs[0]}: a difference below is its, if nothing unrecorded differs.${none}${unknown}`;
  return `${pair}: NOT LIKE FOR LIKE, differs in ${l.differs.length} conditions (${l.differs.join(', ')}): a difference below may come from any of them.${none}${unknown}`;
}

/** The one line under the title: what is compared with what. */
export function baselineText(c: Comparison): string {
  return `Baseline: ${c.series[0]?.label ?? '—'}. Ratios are series / baseline; verdicts are about the series. See "Method" for the intervals.`;
}

/** How the intervals were made, in one paragraph. */
export function methodText(c: Comparison): string {
  return (
    `The 95 % confidence intervals come from a block bootstrap ` +
    `(${c.replicates} replicates, seed ${c.seed}: the same inputs give the same intervals): each replicate draws a level's rounds ` +
    'with replacement, then the requests within each drawn round. Throughput here is output tokens / the summed windows of the ' +
    'level\'s complete rounds (vLLM\'s definition; servebench\'s own tables show the mean of the rounds, which can differ a little). Verdict: "faster" or "slower" when the interval of the difference excludes 0, ' +
    'else "no difference the data can show". Files that carry only summaries get the ratio without an interval.'
  );
}

/** Collects the reasons for a missing interval as numbered footnotes. */
export class Footnotes {
  readonly list: string[] = [];
  /** The footnote number of a reason (added when new). */
  ref(why: string): number {
    const i = this.list.indexOf(why);
    if (i >= 0) return i + 1;
    this.list.push(why);
    return this.list.length;
  }
}

/** The load each side really offered at a compared level, in one line (asked load alone is not like for like). */
export function offeredLine(level: LevelComparison, c: Comparison): string | null {
  const [a, b] = level.offered;
  const s = c.series[level.series];
  if (!s || !c.series[0] || (a === NOT_RECORDED && b === NOT_RECORDED)) return null;
  return `Offered load (really in flight, or sent per second): ${c.series[0].label} ${a}; ${s.label} ${b}.`;
}
