import { describe, expect, it } from 'vitest';
import type { RunEvent } from '../../src/shared/events.js';
import {
  aboutDuration,
  createPaceState,
  elapsedSeconds,
  estimateTimeLeft,
  foldPace,
  levelSeconds,
  planSeconds,
  recordedPaces,
  runClockNow,
  type PlannedLevel,
} from '../../src/shared/run-estimate.js';

interface LevelSpec {
  concurrency: number;
  warmup: number;
  rounds: number;
  perRound: number;
  /** Each request's latency at this load, ms (the server slows as the load grows). */
  latencyMs: number;
}

/**
 * The events of a closed-loop run, as a simulated server answers them: `concurrency` requests in flight, each round
 * drained before the next, latencies varied by a fixed pattern. Only every `keepEvery`th request-done reaches the
 * viewer (a busy run's viewer gets only some), the last of a level always.
 */
function simulate(levels: LevelSpec[], keepEvery = 1): { events: RunEvent[]; endMs: number } {
  const plan: PlannedLevel[] = levels.map((l) => ({
    concurrency: l.concurrency,
    requests: l.warmup + l.rounds * l.perRound,
  }));
  const events: RunEvent[] = [
    {
      type: 'run-started',
      runId: 'r',
      dir: '/r',
      simulated: true,
      totalLevels: levels.length,
      startedAt: '2026-01-01T00:00:10.000Z',
      clockOriginWall: '2026-01-01T00:00:00.000Z',
      plan,
    },
  ];
  let t = 0;
  levels.forEach((spec, levelIndex) => {
    const total = spec.warmup + spec.rounds * spec.perRound;
    events.push({
      type: 'level-started',
      levelIndex,
      concurrency: spec.concurrency,
      inputLen: 128,
      outputLen: 64,
      warmupRequests: spec.warmup,
      measuredRequests: spec.rounds * spec.perRound,
      serverConfigIndex: 0,
    });
    let done = 0;
    const batches = [
      { round: -1, n: spec.warmup },
      ...Array.from({ length: spec.rounds }, (_, r) => ({ round: r, n: spec.perRound })),
    ];
    for (const { round, n } of batches) {
      if (n === 0) continue;
      events.push({
        type: 'phase',
        levelIndex,
        phase: round < 0 ? 'warmup' : 'measure',
        round: round < 0 ? undefined : round,
        atMs: t,
      });
      const slots = Array<number>(spec.concurrency).fill(t);
      const ends: number[] = [];
      for (let i = 0; i < n; i++) {
        const s = slots.indexOf(Math.min(...slots));
        const end = (slots[s] as number) + spec.latencyMs * (0.8 + (0.4 * ((i * 7) % 10)) / 10);
        slots[s] = end;
        ends.push(end);
      }
      ends.sort((a, b) => a - b);
      for (const end of ends) {
        done++;
        if (done % keepEvery === 0 || done === total)
          events.push({
            type: 'request-done',
            levelIndex,
            round,
            ok: true,
            ttftMs: 10,
            e2eMs: spec.latencyMs,
            endMs: end,
            done,
            total,
          });
      }
      t = ends.at(-1) as number;
    }
    events.push({ type: 'level-finished', levelIndex, level: {} as never });
  });
  return { events, endMs: t };
}

/** The estimate after each request-done event, beside the true time left then (seconds). */
function follow(events: RunEvent[], endMs: number): Array<{ atMs: number; run: number | null; truth: number }> {
  const state = createPaceState();
  const out: Array<{ atMs: number; run: number | null; truth: number }> = [];
  for (const event of events) {
    foldPace(state, event);
    if (event.type !== 'request-done') continue;
    out.push({ atMs: event.endMs, run: estimateTimeLeft(state, event.endMs).run, truth: (endMs - event.endMs) / 1000 });
  }
  return out;
}

const sweep: LevelSpec[] = [
  { concurrency: 1, warmup: 24, rounds: 3, perRound: 40, latencyMs: 400 },
  { concurrency: 8, warmup: 24, rounds: 3, perRound: 64, latencyMs: 480 },
  { concurrency: 64, warmup: 128, rounds: 3, perRound: 256, latencyMs: 900 },
];

describe('time left during a run', () => {
  it('says "estimating…" (null) until the first level has a pace of its own, then always has a figure', () => {
    const { events, endMs } = simulate(sweep);
    const seen = follow(events, endMs);
    const firstFigure = seen.findIndex((s) => s.run !== null);
    expect(firstFigure).toBeGreaterThan(0);
    expect(seen.slice(0, firstFigure).every((s) => s.run === null)).toBe(true);
    expect(seen.slice(firstFigure).every((s) => s.run !== null)).toBe(true);
  });

  it('does not jump: between two views it moves by at most a third of what was left, beside the time gone by', () => {
    const { events, endMs } = simulate(sweep, 5);
    const seen = follow(events, endMs).filter((s) => s.run !== null);
    for (let i = 1; i < seen.length; i++) {
      const before = seen[i - 1]!;
      const now = seen[i]!;
      const expected = (before.run as number) - (now.atMs - before.atMs) / 1000;
      expect(Math.abs((now.run as number) - Math.max(0, expected))).toBeLessThanOrEqual((before.run as number) / 3 + 1);
    }
  });

  it('stays within a factor of the truth, and within a fifth (and a drain) once the last level has its own pace', () => {
    const { events, endMs } = simulate(sweep, 5);
    const seen = follow(events, endMs).filter((s) => s.run !== null && s.truth > 1);
    for (const s of seen) {
      expect(s.run as number).toBeGreaterThan(s.truth / 2.5);
      expect(s.run as number).toBeLessThan(s.truth * 2.5);
    }
    // The last level's own pace: its first wave is long back once a quarter of it is.
    const lastStart = events.findIndex((e) => e.type === 'level-started' && e.levelIndex === 2);
    const quarter = events.findIndex((e, i) => i > lastStart && e.type === 'request-done' && e.done >= e.total / 4);
    const fromQuarter = follow(events, endMs).filter(
      (s) => s.atMs >= (events[quarter] as { endMs: number }).endMs && s.truth > 1,
    );
    // Give or take one request's latency: how long a round's drain lasts is not foreseen.
    const drain = sweep[2]!.latencyMs / 1000;
    for (const s of fromQuarter) expect(Math.abs((s.run as number) - s.truth)).toBeLessThan(s.truth / 5 + drain);
  });

  it('a viewer that gets a tenth of the request events estimates as one that gets them all', () => {
    const all = simulate(sweep, 1);
    const tenth = simulate(sweep, 10);
    const probe = all.endMs * 0.6;
    const at = (events: RunEvent[]): number => {
      const state = createPaceState();
      for (const e of events) if (e.type !== 'request-done' || e.endMs <= probe) foldPace(state, e);
      return estimateTimeLeft(state, probe).run as number;
    };
    const everyEvent = at(all.events.filter((e) => e.type !== 'level-finished'));
    expect(Math.abs(at(tenth.events.filter((e) => e.type !== 'level-finished')) - everyEvent)).toBeLessThan(
      everyEvent / 10,
    );
  });

  it('counts down between events on the injected clock, never below nothing', () => {
    const { events } = simulate([sweep[1]!]);
    const state = createPaceState();
    const cut = events.findIndex((e) => e.type === 'request-done' && e.done === 100);
    for (const e of events.slice(0, cut + 1)) foldPace(state, e);
    const last = (events[cut] as { endMs: number }).endMs;
    const now = estimateTimeLeft(state, last).level as number;
    expect(estimateTimeLeft(state, last + 2000).level).toBeCloseTo(now - 2, 6);
    expect(estimateTimeLeft(state, last + 10_000_000).level).toBe(0);
  });

  it('knows the elapsed time and the run clock from the instants the core sent, not from when the view opened', () => {
    const state = createPaceState();
    foldPace(state, simulate([sweep[0]!]).events[0]!);
    expect(elapsedSeconds(state, Date.parse('2026-01-01T00:01:10.000Z'))).toBe(60);
    expect(runClockNow(state, Date.parse('2026-01-01T00:01:10.000Z'))).toBe(70_000);
    expect(elapsedSeconds(createPaceState(), 0)).toBeNull();
  });

  it('a level not started, without a plan (capacity search), lasts like the levels measured so far', () => {
    const { events } = simulate([sweep[0]!]);
    const start = events[0] as Extract<RunEvent, { type: 'run-started' }>;
    const state = createPaceState();
    foldPace(state, { ...start, plan: undefined, totalLevels: 3 });
    for (const e of events.slice(1)) foldPace(state, e);
    const level0 = state.levels[0]!;
    const left = estimateTimeLeft(state, level0.lastEndMs as number);
    expect(left.level).toBeNull();
    expect(left.run).toBeCloseTo((2 * (level0.lastEndMs! - level0.sendStartMs!)) / 1000, 6);
  });
});

describe('time a plan takes', () => {
  const paces = [{ concurrency: 4, requestsPerSec: 20 }];
  it('scales a closed-loop pace by concurrency from the nearest measured load, and goes by an open-loop rate', () => {
    expect(levelSeconds({ concurrency: 8, requests: 400 }, paces)).toBe(10);
    expect(levelSeconds({ concurrency: 0, rate: 5, requests: 100 }, paces)).toBe(20);
    // Measured slower than its rate: the server could not keep up, so its pace counts.
    expect(
      levelSeconds({ concurrency: 0, rate: 5, requests: 100 }, [{ concurrency: 0, rate: 5, requestsPerSec: 2 }]),
    ).toBe(50);
    expect(levelSeconds({ concurrency: 8, requests: 400 }, [])).toBeNull();
    expect(
      planSeconds(
        [
          { concurrency: 2, requests: 100 },
          { concurrency: 4, requests: 200 },
        ],
        paces,
      ),
    ).toBe(20);
  });

  it('scales a closed-loop pace by the answers asked: twice the output tokens, half the pace', () => {
    const measured = [{ concurrency: 4, outputLen: 100, requestsPerSec: 20 }];
    expect(levelSeconds({ concurrency: 4, outputLen: 200, requests: 100 }, measured)).toBe(10);
    // Nearest in both load and length: the pace at the same length is taken over one at another.
    const both = [...measured, { concurrency: 8, outputLen: 200, requestsPerSec: 20 }];
    expect(levelSeconds({ concurrency: 8, outputLen: 200, requests: 100 }, both)).toBe(5);
  });

  it("a finished run's levels give their pace (requests over their span), a level without a span none", () => {
    expect(
      recordedPaces([
        { concurrency: 4, requests: 100, startMs: 1000, endMs: 6000 },
        { concurrency: 8, requests: 100 },
      ]),
    ).toEqual([{ concurrency: 4, rate: undefined, requestsPerSec: 20 }]);
  });

  it('reads as "about N min", an estimate', () => {
    expect(aboutDuration(42)).toBe('about 42 s');
    expect(aboutDuration(270)).toBe('about 5 min');
    expect(aboutDuration(7500)).toBe('about 2 h 5 min');
  });
});
