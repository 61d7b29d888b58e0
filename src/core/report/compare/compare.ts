import { BOOTSTRAP_REPLICATES, BOOTSTRAP_SEED, bootstrapDifference } from './statistics.js';
import type { FigureInterval } from './statistics.js';
import { FIGURES } from './types.js';
import type { CompareLevel, CompareSeries, Conditions, FigureKey, FigureSource, LevelLoad } from './types.js';

/** One row of the conditions table: a value per series, and whether they differ. */
interface ConditionRow {
  key: string;
  label: string;
  values: string[];
  differs: boolean;
}

/** How a series' conditions stand against the baseline's. */
export interface LikeForLike {
  /** Conditions known on both sides that differ. */
  differs: string[];
  /** Conditions one side did not record. */
  unknown: string[];
  /** True only when every condition recorded on both sides is the same and at least one load was measured by both. */
  likeForLike: boolean;
  /** No load was measured by both: nothing of the two is compared. */
  noCommonLevel?: boolean;
}

export type Verdict = 'faster' | 'slower' | 'no difference the data can show' | 'no verdict';

/** One figure of one level of one series against the baseline. */
export interface FigureComparison {
  key: FigureKey;
  label: string;
  unit: string;
  baseline: number | null;
  value: number | null;
  /** value / baseline. */
  ratio: number | null;
  /** 95 % bootstrap interval of value − baseline and of the ratio; absent with only summaries. */
  interval?: FigureInterval;
  verdict: Verdict;
  /** Why there is no interval or no figure. */
  why?: string;
}

/** A level both the baseline and a series measured. */
export interface LevelComparison {
  load: LevelLoad;
  /** Set where the baseline sweeps lengths: which lengths this level ran. */
  lengths?: [number, number];
  series: number;
  figures: FigureComparison[];
  partial: boolean;
  /** The load each side really offered at this asked load (baseline, series); 'not recorded' where unknown. */
  offered: [string, string];
}

/** The whole comparison: conditions first, then per matching level the figures against the baseline. */
export interface Comparison {
  series: CompareSeries[];
  conditions: ConditionRow[];
  /** Per series (index 0, the baseline, is compared with itself). */
  likeForLike: LikeForLike[];
  levels: LevelComparison[];
  /** Loads only some series measured. */
  unmatched: string[];
  replicates: number;
  seed: number;
}

/** A condition or figure a series did not record. */
export const NOT_RECORDED = 'not recorded';

interface ConditionDef {
  key: string;
  label: string;
  text: (c: Conditions) => string | undefined;
  same?: (a: Conditions, b: Conditions) => boolean;
}

const near = (a: number | undefined, b: number | undefined): boolean =>
  a === undefined || b === undefined || Math.abs(a - b) <= 0.05 * Math.max(Math.abs(a), Math.abs(b), 1);

const CONDITIONS: ConditionDef[] = [
  {
    key: 'measuredBy',
    label: 'measured by',
    text: (c) => c.measuredBy,
    same: (a, b) => a.measuredBy.split(' ')[0] === b.measuredBy.split(' ')[0],
  },
  { key: 'engine', label: 'engine and version', text: (c) => c.engine },
  { key: 'model', label: 'model', text: (c) => c.model },
  { key: 'quantization', label: 'quantization', text: (c) => c.quantization },
  { key: 'gpu', label: 'GPU and driver', text: (c) => c.gpu },
  {
    key: 'lengths',
    label: 'input / output tokens',
    text: (c) =>
      c.inputLen === undefined && c.outputLen === undefined
        ? undefined
        : `${c.inputLen ?? '?'} in / ${c.outputLen ?? '?'} out`,
    // Files give measured means, run folders the requested lengths: within 5 % is the same workload.
    same: (a, b) => near(a.inputLen, b.inputLen) && near(a.outputLen, b.outputLen),
  },
  { key: 'diffusion', label: 'diffusion parameters', text: (c) => c.diffusion },
  { key: 'servebenchVersion', label: 'servebench version', text: (c) => c.servebenchVersion },
  {
    key: 'simulated',
    label: 'simulated',
    text: (c) => (c.simulated === undefined ? undefined : c.simulated ? 'SIMULATED' : 'no'),
  },
  { key: 'serverSettings', label: 'server settings', text: (c) => c.serverSettings },
  { key: 'workload', label: 'workload', text: (c) => c.workload },
];

function conditionRows(series: readonly CompareSeries[]): ConditionRow[] {
  return CONDITIONS.map((d) => {
    const texts = series.map((s) => d.text(s.conditions));
    const base = series[0];
    const differs = series.some((s, i) => {
      if (i === 0 || !base) return false;
      const a = texts[0];
      const b = texts[i];
      if (a === undefined || b === undefined) return false;
      return d.same ? !d.same(base.conditions, s.conditions) : a !== b;
    });
    return { key: d.key, label: d.label, values: texts.map((t) => t ?? NOT_RECORDED), differs };
  }).filter((r) => r.values.some((v) => v !== NOT_RECORDED));
}

function likeForLike(base: CompareSeries, s: CompareSeries): LikeForLike {
  const differs: string[] = [];
  const unknown: string[] = [];
  for (const d of CONDITIONS) {
    const a = d.text(base.conditions);
    const b = d.text(s.conditions);
    if (a === undefined && b === undefined) continue;
    if (a === undefined || b === undefined) unknown.push(d.label);
    else if (d.same ? !d.same(base.conditions, s.conditions) : a !== b) differs.push(d.label);
  }
  return { differs, unknown, likeForLike: differs.length === 0 };
}

/** Each kind of load in words: a level's load, one such level, and such levels. */
const KIND_TEXT: Record<LevelLoad['kind'], { at: (v: number) => string; a: string; levels: string }> = {
  concurrency: { at: (v) => `concurrency ${v}`, a: 'a concurrency level', levels: 'concurrency levels' },
  rate: { at: (v) => `${v} req/s`, a: 'a request-rate level', levels: 'request-rate levels' },
  burst: { at: (v) => `burst of ${v} at once`, a: 'a burst', levels: 'bursts' },
};

const sameLoad = (a: LevelLoad, b: LevelLoad): boolean => a.kind === b.kind && Math.abs(a.value - b.value) < 1e-9;

/** Same load, and the same requested lengths where both sides know them (a length sweep repeats loads). */
const sameLevel = (a: CompareLevel, b: CompareLevel): boolean =>
  sameLoad(a.load, b.load) &&
  (!a.lengths || !b.lengths || (a.lengths[0] === b.lengths[0] && a.lengths[1] === b.lengths[1]));

const lengthKinds = (s: CompareSeries): number => new Set(s.levels.map((l) => l.lengths?.join('/'))).size;

function verdictOf(diff: [number, number], higherIsBetter: boolean): Verdict {
  if (diff[0] <= 0 && diff[1] >= 0) return 'no difference the data can show';
  const up = diff[0] > 0;
  return up === higherIsBetter ? 'faster' : 'slower';
}

function compareLevels(
  a: CompareLevel,
  b: CompareLevel,
  sa: CompareSeries,
  sb: CompareSeries,
  options: { replicates: number; seed: number },
): FigureComparison[] {
  const boot =
    a.blocks?.length && b.blocks?.length
      ? bootstrapDifference(a.blocks, b.blocks, {
          replicates: options.replicates,
          seed: options.seed,
          withThroughput: a.figures.throughput !== null && b.figures.throughput !== null,
        })
      : {};
  const aName = sa.label;
  const bName = sb.label;
  return FIGURES.flatMap((f): FigureComparison[] => {
    const x = a.figures[f.key] ?? null;
    const y = b.figures[f.key] ?? null;
    // Neither side recorded it (runs from before a figure existed, tools that never write it): no row.
    if (x === null && y === null) return [];
    const unlike = unlikeRows(f, x, y, sa, sb);
    if (unlike) return unlike;
    const ratio = x !== null && y !== null && x > 0 ? y / x : null;
    // Both sides the same tool's own figure (not servebench's): compared under that tool's name.
    const label = foreignSource(sa, f.key)?.name ?? f.label;
    const base = { key: f.key, label, unit: f.unit, baseline: x, value: y, ratio };
    if (x === null || y === null) {
      const lacking = [x === null ? sa : null, y === null ? sb : null].filter((s): s is CompareSeries => s !== null);
      const who = lacking.map((s) => s.label).join(' and ');
      const hints = [...new Set(lacking.map((s) => s.figureHint).filter(Boolean))];
      return [
        {
          ...base,
          verdict: 'no verdict' as const,
          why: `${who} recorded no ${label}${hints.length ? ` (${hints.join('; ')})` : ''}`,
        },
      ];
    }
    const missing = a.missingRequests?.[f.key] ?? b.missingRequests?.[f.key];
    const interval = boot[f.key];
    if (missing || !interval) {
      const why = missing
        ? `ratio of the summaries only: ${missing === a.missingRequests?.[f.key] ? aName : bName}: ${missing}`
        : 'too few requests for a confidence interval';
      return [{ ...base, verdict: 'no verdict' as const, why }];
    }
    return [{ ...base, interval, verdict: verdictOf(interval.diff, f.higherIsBetter) }];
  });
}

/** A series' own figure where its tool defines it otherwise than servebench (absent: servebench's definition). */
function foreignSource(s: CompareSeries, key: FigureKey): FigureSource | undefined {
  const d = s.definitions?.[key];
  return d?.match === 'differs' ? d : undefined;
}

/**
 * Unlike figures are never compared: where one side's figure is its tool's own quantity (and the other side's is
 * not the same one), servebench's row keeps only the side that has servebench's figure, and each tool's own figure
 * gets its own row under its own name with its definition as the note. Null when the two are alike.
 */
function unlikeRows(
  f: (typeof FIGURES)[number],
  x: number | null,
  y: number | null,
  sa: CompareSeries,
  sb: CompareSeries,
): FigureComparison[] | null {
  const fa = foreignSource(sa, f.key);
  const fb = foreignSource(sb, f.key);
  if ((!fa && !fb) || (fa && fb && fa.name === fb.name)) return null;
  const row = (label: string, baseline: number | null, value: number | null, why: string): FigureComparison => ({
    key: f.key,
    label,
    unit: f.unit,
    baseline,
    value,
    ratio: null,
    verdict: 'no verdict',
    why,
  });
  const rows: FigureComparison[] = [];
  // The notes name the metric, not the percentile: p50 and p95 of one definition share a footnote.
  const metric = f.label.replace(/ p[\d.]+$/, '');
  const own = (d: FigureSource): string => d.name.replace(/ p[\d.]+$/, '');
  // A tool's own figure gets a row only where the tool wrote it (its files may lack a percentile servebench has).
  const ownA = fa !== undefined && x !== null;
  const ownB = fb !== undefined && y !== null;
  // servebench's figure, where one side has it: the other side's tool wrote its own quantity instead.
  const servebenchValue = fa ? y : x;
  if (!(fa && fb) && servebenchValue !== null)
    rows.push(
      row(
        f.label,
        fa ? null : x,
        fb ? null : y,
        `${(fa ? sa : sb).label} wrote no ${metric} as servebench defines it` +
          ((fa ? ownA : ownB) ? ' (its own figure is the next row)' : ''),
      ),
    );
  if (fa && ownA) rows.push(row(fa.name, x, null, `${sa.label}: ${own(fa)} is not servebench's ${metric}: ${fa.note}`));
  if (fb && ownB) rows.push(row(fb.name, null, y, `${sb.label}: ${own(fb)} is not servebench's ${metric}: ${fb.note}`));
  return rows;
}

/**
 * Compares every series with the first (the baseline): conditions, then per load both measured the ratio of each
 * figure with a seeded block-bootstrap 95 % interval of the difference and a verdict.
 */
export function compareSeries(
  series: CompareSeries[],
  options: { replicates?: number; seed?: number } = {},
): Comparison {
  const replicates = options.replicates ?? BOOTSTRAP_REPLICATES;
  const seed = options.seed ?? BOOTSTRAP_SEED;
  const base = series[0];
  const levels: LevelComparison[] = [];
  const unmatched: string[] = [];
  if (base) {
    series.forEach((s, si) => {
      if (si === 0) return;
      s.levels.forEach((lb) => {
        const li = base.levels.findIndex((la) => sameLevel(la, lb));
        const la = base.levels[li];
        if (!la) return;
        levels.push({
          load: lb.load,
          lengths: lengthKinds(base) > 1 || lengthKinds(s) > 1 ? (lb.lengths ?? la.lengths) : undefined,
          series: si,
          partial: !!(la.partial || lb.partial),
          offered: [la.offered ?? NOT_RECORDED, lb.offered ?? NOT_RECORDED],
          figures: compareLevels(la, lb, base, s, {
            replicates,
            seed: (seed + si * 7919 + li * 104729) >>> 0,
          }),
        });
      });
    });
    const lengthsText = (l: CompareLevel): string => (l.lengths ? ` (${l.lengths[0]} in / ${l.lengths[1]} out)` : '');
    const where = (l: CompareLevel): string => `${KIND_TEXT[l.load.kind].at(l.load.value)}${lengthsText(l)}`;
    // A level with no match of its kind on the other side, where that side ran other kinds: say why it is not compared.
    const why = (l: CompareLevel, other: CompareSeries): string => {
      const kinds = [...new Set(other.levels.map((o) => o.load.kind))].filter((k) => k !== l.load.kind);
      if (kinds.length === 0 || other.levels.some((o) => o.load.kind === l.load.kind)) return '';
      return ` (${KIND_TEXT[l.load.kind].a} against ${kinds.map((k) => KIND_TEXT[k].levels).join(' and ')} is not like for like)`;
    };
    series.forEach((s, si) => {
      if (si === 0) return;
      for (const l of s.levels)
        if (!base.levels.some((la) => sameLevel(la, l)))
          unmatched.push(`${where(l)}: in ${s.label}, not in the baseline${why(l, base)}`);
      for (const l of base.levels)
        if (!s.levels.some((lb) => sameLevel(l, lb)))
          unmatched.push(`${where(l)}: in the baseline, not in ${s.label}${why(l, s)}`);
    });
  }
  return {
    series,
    conditions: conditionRows(series),
    likeForLike: series.map((s, si) => {
      if (!base) return { differs: [], unknown: [], likeForLike: true };
      const l = likeForLike(base, s);
      // Conditions alike, yet no load in common: nothing is compared like for like.
      return si > 0 && !levels.some((x) => x.series === si) ? { ...l, likeForLike: false, noCommonLevel: true } : l;
    }),
    levels: levels.sort((p, q) => p.load.value - q.load.value || p.series - q.series),
    unmatched,
    replicates,
    seed,
  };
}
