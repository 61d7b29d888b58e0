import { METRICS, metricApplies, statPercentile } from '../../shared/metrics.js';
import type { MetricDef } from '../../shared/metrics.js';
import { measureOffered } from '../../shared/offered-load.js';
import type { OfferedLoad } from '../../shared/run-record.js';
import type { LivePoint, LiveRun } from './live-run.js';

/** Requests a level must have finished before its rate so far is shown. */
const MIN_RATE_SAMPLES = 6;
/** The rate is taken over this many most recent requests: the level's pace now, not its start. */
const RATE_WINDOW = 64;

/** Completions per second of a level over its recent requests (ends on the run's clock), or null with too few. */
function levelRate(run: LiveRun, levelIndex: number): number | null {
  const ends = run.points.filter((p) => p.levelIndex === levelIndex).map((p) => p.tMs);
  if (ends.length < MIN_RATE_SAMPLES) return null;
  const recent = ends.slice(-RATE_WINDOW);
  const span = (recent[recent.length - 1] as number) - (recent[0] as number);
  return span > 0 ? ((recent.length - 1) / span) * 1000 : null;
}

/** "about 2 min 10 s" / "about 40 s"; null reads "estimating…". */
export function fmtTimeLeft(seconds: number | null): string {
  if (seconds === null) return 'estimating…';
  const s = Math.round(seconds);
  if (s < 60) return `about ${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `about ${m} min ${s % 60} s`;
  return `about ${Math.floor(m / 60)} h ${m % 60} min`;
}

/** Nearest-rank percentile of sorted values. */
function pct(sorted: number[], p: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] as number;
}

/** One registry figure as it forms. */
interface FormingFigure {
  metric: MetricDef;
  value: number | null;
}

/** The registry's live figures the points carry (a point has a request's TTFT and E2E). */
const LIVE = METRICS.filter(
  (m) => m.views.live && (m.quantity === 'ttft' || m.quantity === 'e2e') && statPercentile(m.stat) !== null,
);

/** The current level's figures so far, from its measured (not warm-up) requests. */
export interface FormingFigures {
  measured: number;
  failed: number;
  /** Completions per second over the level's recent requests. */
  rate: number | null;
  /** The registry's live figures (TTFT p50, p95, E2E p50 ...), in registry order. */
  figures: FormingFigure[];
  /** The load really offered over the level's completed rounds, measured as the level's own is; null before one. */
  offered: OfferedLoad | null;
}

/** The offered load of a level's completed measured rounds (a round in progress has requests still unseen). */
function offeredSoFar(run: LiveRun, levelIndex: number, points: readonly LivePoint[]): OfferedLoad | null {
  const level = run.levels[levelIndex];
  if (!level || level.phase !== 'measure' || level.round === undefined) return null;
  const done = points.filter((p) => p.round < (level.round as number));
  if (done.length === 0) return null;
  const openLoop = level.rate !== undefined || level.burst !== undefined;
  const m = measureOffered(
    done.map((p) => ({ ...p, sendMs: p.tMs - (p.e2eMs ?? 0), endMs: p.tMs })),
    { concurrency: level.concurrency, openLoop, cap: openLoop ? level.concurrency : undefined },
  );
  return Object.keys(m.offered).length > 0 ? m.offered : null;
}

/** The figures of a level as they form (provisional: the finished level's own are what count). */
export function formingFigures(run: LiveRun, levelIndex: number): FormingFigures {
  const points = run.points.filter((p) => p.levelIndex === levelIndex && !p.warmup);
  const ok = points.filter((p) => p.ok);
  const sorted = (q: 'ttftMs' | 'e2eMs'): number[] =>
    ok.flatMap((p) => (p[q] === null ? [] : [p[q]])).sort((a, b) => a - b);
  const samples = { ttft: sorted('ttftMs'), e2e: sorted('e2eMs') };
  return {
    measured: points.length,
    failed: points.length - ok.length,
    rate: levelRate(run, levelIndex),
    // An embeddings or rerank level has no TTFT: its latency is E2E.
    figures: LIVE.filter((m) => metricApplies(m, run.levels[levelIndex]?.endpoint ?? 'chat')).map((metric) => ({
      metric,
      value: pct(samples[metric.quantity as 'ttft' | 'e2e'], statPercentile(metric.stat) as number),
    })),
    offered: offeredSoFar(run, levelIndex, points),
  };
}
