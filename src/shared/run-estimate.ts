import type { RunEvent } from './events.js';

/** One level of a run's plan, as far as its length goes: its load and every request it will send (warm-up too). */
export interface PlannedLevel {
  concurrency: number;
  /** Open loop: arrivals per second (the level then lasts about requests / rate, whatever the server). */
  rate?: number;
  requests: number;
  /** Output tokens a request asks for, where the level fixes them: a closed-loop level's time follows them. */
  outputLen?: number;
}

/** A pace measured (or assumed) at one load: completed requests per second. */
export interface Pace {
  concurrency: number;
  rate?: number;
  requestsPerSec: number;
  outputLen?: number;
}

/** Waves of requests (one per request in flight) over which a level's own pace takes over from the predicted one. */
const RAMP_WAVES = 4;

/** Requests a level must have completed, and at least one per request in flight, before its own pace is trusted. */
export const MIN_PACE_REQUESTS = 8;

/**
 * Completions per second a closed-loop level at `concurrency` keeps, from the measured paces nearest its load: with
 * two, along the power law through them (the exponent held to [0, 1]: more load never slows the whole, nor helps more
 * than in proportion); with one, in proportion to concurrency (a floor: latency grows with load). Null with none.
 */
function closedLoopPace(concurrency: number, paces: readonly Pace[], outputLen?: number): number | null {
  const closed = paces.filter((p) => p.rate === undefined && p.concurrency > 0 && p.requestsPerSec > 0);
  if (closed.length === 0 || concurrency <= 0) return null;
  // Answers of another length: a request lasts about in proportion to its output tokens (decode dominates).
  const lengthRatio = (p: Pace): number =>
    outputLen && p.outputLen && outputLen > 0 && p.outputLen > 0 ? p.outputLen / outputLen : 1;
  const distance = (p: Pace): number =>
    Math.abs(Math.log(p.concurrency / concurrency)) + Math.abs(Math.log(lengthRatio(p)));
  const [a, b] = [...closed].sort((x, y) => distance(x) - distance(y));
  const nearest = a as Pace;
  let exponent = 1;
  if (b && b.concurrency !== nearest.concurrency && b.outputLen === nearest.outputLen) {
    const fit = Math.log(b.requestsPerSec / nearest.requestsPerSec) / Math.log(b.concurrency / nearest.concurrency);
    exponent = Math.min(1, Math.max(0, fit));
  }
  return nearest.requestsPerSec * (concurrency / nearest.concurrency) ** exponent * lengthRatio(nearest);
}

/**
 * Seconds a planned level takes, from the pace measured at the load nearest its own: an open-loop level at its
 * arrival rate (or slower where the server was measured slower at it); a closed-loop one at closedLoopPace. Null
 * with no pace to go by.
 */
export function levelSeconds(level: PlannedLevel, paces: readonly Pace[]): number | null {
  if (level.requests <= 0) return 0;
  const perSec = plannedPace(level, paces);
  return perSec === null ? null : level.requests / perSec;
}

function plannedPace(level: Omit<PlannedLevel, 'requests'>, paces: readonly Pace[]): number | null {
  if (level.rate !== undefined && level.rate > 0) {
    const same = paces.find((p) => p.rate === level.rate);
    return same ? Math.min(level.rate, same.requestsPerSec) : level.rate;
  }
  return closedLoopPace(level.concurrency, paces, level.outputLen);
}

/** The seconds a whole plan takes at these paces (null when one of its levels has none to go by). */
export function planSeconds(levels: readonly PlannedLevel[], paces: readonly Pace[]): number | null {
  let total = 0;
  for (const level of levels) {
    const s = levelSeconds(level, paces);
    if (s === null) return null;
    total += s;
  }
  return total;
}

/** The pace each level of a finished run kept: its requests over its span (a re-run's estimate goes by these). */
export function recordedPaces(
  levels: ReadonlyArray<{
    concurrency: number;
    rate?: number;
    requests: number;
    startMs?: number;
    endMs?: number;
    outputLen?: number;
  }>,
): Pace[] {
  return levels.flatMap((l) => {
    const spanMs = l.startMs !== undefined && l.endMs !== undefined ? l.endMs - l.startMs : 0;
    if (spanMs <= 0 || l.requests <= 0) return [];
    const pace: Pace = { concurrency: l.concurrency, rate: l.rate, requestsPerSec: (l.requests * 1000) / spanMs };
    return [l.outputLen !== undefined ? { ...pace, outputLen: l.outputLen } : pace];
  });
}

/** Where a run estimate's pace comes from: arrivals (open loop), a recorded run, both, or none known. */
export type PlanBasis = 'arrivals' | 'recorded' | 'mixed' | 'none';

/** What a run will send and how long it will take, before Start (the core's planRun answers it). */
export interface RunPlan {
  /** Levels in all, every server configuration's (a capacity search's are chosen as it goes: its most). */
  levels: number;
  serverConfigs: number;
  rounds: number;
  /** Every request the run sends, warm-up included, and of them the warm-up's. */
  requests: number;
  warmupRequests: number;
  /** Seconds the levels take sending, at the pace of `basis`; null when a level has no pace to go by. */
  seconds: number | null;
  basis: PlanBasis;
  /** --precision: rounds may stop early, so the run takes at most this. */
  atMost: boolean;
  /** --find-capacity: the levels are chosen as the search goes; requests and seconds are not known before. */
  capacity: boolean;
  /** What the figure leaves out: server launches and prompt calibration always, cool-down waits where asked. */
  excludes: Array<'launch' | 'calibration' | 'cool-down'>;
}

/** "about 3 min" / "about 40 s" / "about 2 h 5 min": an estimate, never to the second past a minute. */
export function aboutDuration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `about ${s} s`;
  const m = Math.round(s / 60);
  if (m < 60) return `about ${m} min`;
  return `about ${Math.floor(m / 60)} h ${m % 60} min`;
}

/** One level as the estimate follows it: its load, its requests, and when its sending began (run clock, ms). */
interface PaceLevel {
  index: number;
  concurrency: number;
  rate?: number;
  outputLen?: number;
  total: number;
  done: number;
  /** When its warm-up (or first round) began sending: the pace is taken from here. */
  sendStartMs: number | null;
  /** The last completion seen, ms on the run clock. */
  lastEndMs: number | null;
  finished: boolean;
}

/** What the live estimate is folded from: the run's plan and clock, and the levels so far. */
export interface PaceState {
  totalLevels: number;
  plan: PlannedLevel[] | null;
  /** The run clock's origin as a wall instant (ms since the epoch): run-clock now = wall now − this. */
  clockOriginWallMs: number | null;
  /** The run's start as a wall instant (ms since the epoch): the elapsed time survives a reload. */
  startedAtWallMs: number | null;
  levels: PaceLevel[];
}

/** An empty estimate state. */
export function createPaceState(): PaceState {
  return { totalLevels: 0, plan: null, clockOriginWallMs: null, startedAtWallMs: null, levels: [] };
}

const wallMs = (iso: string | undefined): number | null => {
  const ms = iso === undefined ? NaN : Date.parse(iso);
  return Number.isFinite(ms) ? ms : null;
};

/** Folds one run event into the estimate state (mutates it). */
export function foldPace(state: PaceState, event: RunEvent): void {
  switch (event.type) {
    case 'run-started':
      Object.assign(state, createPaceState(), {
        totalLevels: event.totalLevels,
        plan: event.plan ?? null,
        clockOriginWallMs: wallMs(event.clockOriginWall),
        startedAtWallMs: wallMs(event.startedAt),
      });
      return;
    case 'level-started':
      state.levels[event.levelIndex] = {
        index: event.levelIndex,
        concurrency: event.concurrency,
        rate: event.rate,
        ...(event.outputFromFile ? {} : { outputLen: event.outputLen }),
        total: event.warmupRequests + event.measuredRequests,
        done: 0,
        sendStartMs: null,
        lastEndMs: null,
        finished: false,
      };
      return;
    case 'phase': {
      const level = state.levels[event.levelIndex];
      const sending = event.phase === 'warmup' || event.phase === 'measure';
      if (level && sending && level.sendStartMs === null && event.atMs !== undefined) level.sendStartMs = event.atMs;
      return;
    }
    case 'request-done': {
      const level = state.levels[event.levelIndex];
      if (!level) return;
      // `done` is exact even where a viewer gets only some of these events: the pace never counts events.
      level.done = Math.max(level.done, event.done);
      level.total = event.total;
      level.lastEndMs = Math.max(level.lastEndMs ?? event.endMs, event.endMs);
      return;
    }
    case 'level-finished': {
      const level = state.levels[event.levelIndex];
      if (level) level.finished = true;
      return;
    }
    default:
      return;
  }
}

/** A level's own measured pace (requests per second since it began sending), or null while too little is back. */
function measuredPace(level: PaceLevel): number | null {
  if (level.sendStartMs === null || level.lastEndMs === null) return null;
  if (level.done < Math.max(MIN_PACE_REQUESTS, level.concurrency)) return null;
  const spanMs = level.lastEndMs - level.sendStartMs;
  return spanMs > 0 ? (level.done * 1000) / spanMs : null;
}

/** Seconds left, or null while too little is measured to say ("estimating…"). */
export interface TimeLeft {
  level: number | null;
  run: number | null;
}

/** How far a level's own pace has taken over from the predicted one: 0 to 1 over its first waves. */
function settled(level: PaceLevel): number {
  return level.finished ? 1 : Math.min(1, level.done / (RAMP_WAVES * Math.max(MIN_PACE_REQUESTS, level.concurrency)));
}

/** The settled paces measured so far (a level's first wave alone would swing the other levels' estimate), but `except`'s. */
function pacesOf(state: PaceState, except?: number): Pace[] {
  return state.levels.flatMap((l) => {
    const perSec = l && l.index !== except && settled(l) === 1 ? measuredPace(l) : null;
    return perSec === null
      ? []
      : [{ concurrency: l.concurrency, rate: l.rate, outputLen: l.outputLen, requestsPerSec: perSec }];
  });
}

/** The levels not started yet: from the plan where the run sent one, else like the levels measured so far. */
function laterSeconds(state: PaceState, paces: readonly Pace[], started: number): number | null {
  if (state.plan) return planSeconds(state.plan.slice(started), paces);
  const lengths = state.levels.flatMap((l) => {
    const perSec = l ? measuredPace(l) : null;
    return perSec ? [l.total / perSec] : [];
  });
  if (lengths.length === 0) return null;
  const mean = lengths.reduce((a, b) => a + b, 0) / lengths.length;
  return Math.max(0, state.totalLevels - started) * mean;
}

/**
 * Time left at `nowMs` (run clock): the current level's requests left at its own pace since it began sending (or,
 * before enough is back, at the pace of the levels before it scaled to its load), counting down between events;
 * then the later levels' planned requests at the pace measured nearest their load. Pauses between levels (prompt
 * building, cool-down, server restarts) are not in it.
 */
export function estimateTimeLeft(state: PaceState, nowMs: number): TimeLeft {
  const started = state.levels.filter(Boolean);
  const current = started.filter((l) => !l.finished).at(-1);
  const paces = pacesOf(state);
  const later = laterSeconds(state, paces, started.length);
  if (!current) return { level: null, run: started.length > 0 ? later : null };
  const own = measuredPace(current);
  const remaining = Math.max(0, current.total - current.done);
  const predicted = plannedPace(current, pacesOf(state, current.index));
  let perSec = own ?? predicted;
  if (own !== null && predicted !== null) {
    // From the pace predicted to the level's own over its first waves: the figure moves there, it does not jump.
    const weight = settled(current);
    perSec = weight * own + (1 - weight) * predicted;
  }
  let level: number | null = null;
  if (perSec !== null && perSec > 0) {
    // Counts down from the last completion seen (or the first send), never below nothing.
    const anchor = current.lastEndMs ?? current.sendStartMs;
    const since = anchor === null ? 0 : Math.max(0, nowMs - anchor) / 1000;
    level = Math.max(0, remaining / perSec - since);
  }
  return { level, run: level === null || later === null ? null : level + later };
}

/** The run's elapsed seconds at wall instant `wallNowMs`, from its start as the core knows it (null before it says). */
export function elapsedSeconds(state: PaceState, wallNowMs: number): number | null {
  return state.startedAtWallMs === null ? null : Math.max(0, (wallNowMs - state.startedAtWallMs) / 1000);
}

/** The run clock's now, from the wall clock (null before the run said its clock's origin). */
export function runClockNow(state: PaceState, wallNowMs: number): number | null {
  return state.clockOriginWallMs === null ? null : wallNowMs - state.clockOriginWallMs;
}
