import { measureOffered } from '../../shared/offered-load.js';
import type { OfferedLoad } from '../../shared/run-record.js';
import type { GpuSample } from '../../shared/telemetry.js';
import type { TimeBand } from './chart-data.js';
import type { LiveLevel, LivePoint, LiveRun } from './live-run.js';

/** Requests a level must have finished before its rate so far is shown. */
export const MIN_RATE_SAMPLES = 6;
/** The rate is taken over this many most recent requests: the level's pace now, not its start. */
const RATE_WINDOW = 64;

/** The level being worked on: the last one started and not done. */
export function currentLevel(run: LiveRun): LiveLevel | undefined {
  return run.levels.filter((l) => l && l.phase !== 'done').at(-1);
}

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

/** The current level's figures so far, from its measured (not warm-up) requests. */
export interface FormingFigures {
  measured: number;
  failed: number;
  /** Completions per second over the level's recent requests. */
  rate: number | null;
  ttftP50: number | null;
  ttftP95: number | null;
  e2eP50: number | null;
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
  const ttft = ok.flatMap((p) => (p.ttftMs === null ? [] : [p.ttftMs])).sort((a, b) => a - b);
  const e2e = ok.flatMap((p) => (p.e2eMs === null ? [] : [p.e2eMs])).sort((a, b) => a - b);
  return {
    measured: points.length,
    failed: points.length - ok.length,
    rate: levelRate(run, levelIndex),
    ttftP50: pct(ttft, 50),
    ttftP95: pct(ttft, 95),
    e2eP50: pct(e2e, 50),
    offered: offeredSoFar(run, levelIndex, points),
  };
}

const THROTTLED = new Set(['thermal', 'hw-slowdown', 'power-cap']);

/** Stretches where a GPU was throttled (thermal, power cap, hardware slowdown), in seconds on the run's clock. */
export function throttleSpans(samples: GpuSample[]): TimeBand[] {
  const out: TimeBand[] = [];
  const open = new Map<number, { from: number; to: number; kind: string }>();
  const close = (gpu: number): void => {
    const span = open.get(gpu);
    if (span) out.push({ from: span.from / 1000, to: span.to / 1000, label: span.kind, tone: 'throttle' });
    open.delete(gpu);
  };
  for (const s of samples) {
    const span = open.get(s.gpu);
    if (THROTTLED.has(s.class)) {
      if (span && span.kind === s.class) span.to = s.tMs;
      else {
        close(s.gpu);
        open.set(s.gpu, { from: s.tMs, to: s.tMs, kind: s.class });
      }
    } else if (span) {
      // The span lasts until the first sample that is no longer throttled.
      span.to = s.tMs;
      close(s.gpu);
    }
  }
  for (const gpu of [...open.keys()]) close(gpu);
  return out.filter((b) => b.to > b.from);
}
