import { describe, expect, it } from 'vitest';
import { closedLoopInFlight, heldByCap, judgedWindow, openLoopRate } from '../../src/shared/offered-load.js';
import type { FlightSpan } from '../../src/shared/offered-load.js';

const span = (sendMs: number, endMs: number, ok = true): FlightSpan => ({ sendMs, endMs, ok });

/** A closed loop of `lanes` lanes on a virtual timeline: each lane sends its next request `gapMs` after its last ended. */
function lanesOf(lanes: number, perLane: number[][], gapMs = 0, failed: (id: number) => boolean = () => false) {
  const spans: FlightSpan[] = [];
  let id = 0;
  for (let l = 0; l < lanes; l++) {
    let t = 0;
    for (const d of perLane[l] ?? []) {
      spans.push(span(t, t + d, !failed(id++)));
      t += d + gapMs;
    }
  }
  return spans;
}

describe('closed-loop in-flight measure', () => {
  it('a client that refills at once holds exactly C, whatever the drain at the end of the round', () => {
    // 2 lanes, 3 requests each; lane 1's last request runs long: after its partner's last end the round drains.
    const spans = lanesOf(2, [
      [10, 10, 10],
      [10, 10, 50],
    ]);
    // 6 requests, C = 2: window ends at the later of the last send (20) and the 5th end (30).
    expect(judgedWindow(spans, 2)).toEqual({ startMs: 0, endMs: 30 });
    const m = closedLoopInFlight([spans], 2)!;
    expect(m.mean).toBe(2);
    expect(m.p5).toBe(2);
    expect(m.windowMs).toBe(30);
    expect(m.shortfallMs).toBe(0);
  });

  it('a client that takes 5 ms between a response end and the next send holds C x d / (d + gap)', () => {
    // 1 lane, 10 ms requests, 5 ms gaps: in flight 10 of every 15 ms.
    const spans = lanesOf(1, [[10, 10, 10, 10]], 5);
    const m = closedLoopInFlight([spans], 1)!;
    // Window: first send 0 .. last send 45 (the 4th end, 55, is later: N - C + 1 = 4th end).
    expect(m.windowMs).toBe(55);
    expect(m.mean).toBeCloseTo(40 / 55, 12);
    expect(m.p5).toBe(0);
    expect(m.shortfallMs).toBeCloseTo(15, 12);
    expect(m.afterFailureMs).toBe(0);
  });

  it('attributes the refill gaps after failed requests to the failures', () => {
    // 1 lane: ok 10 ms, failed 1 ms, failed 1 ms, ok 10 ms; 5 ms gap after each.
    const spans = lanesOf(1, [[10, 1, 1, 10]], 5, (id) => id === 1 || id === 2);
    const m = closedLoopInFlight([spans], 1)!;
    expect(m.shortfallMs).toBeCloseTo(15, 12);
    // The gaps after requests 1 and 2 (both failed) are theirs; the one after request 0 is the client's.
    expect(m.afterFailureMs).toBeCloseTo(10, 12);
  });

  it('pools rounds: the mean is the area over the summed windows, p5 time-weighted over both', () => {
    const full = lanesOf(2, [
      [10, 10],
      [10, 10],
    ]);
    // A second round in which lane 2 starts 10 ms late.
    const late = [span(100, 110), span(110, 120), span(110, 120), span(120, 130)];
    const m = closedLoopInFlight([full, late], 2)!;
    // Round 1: 20 ms at 2. Round 2: window 100 .. max(last send 120, 3rd end 120) = 20 ms: 1 for 10 ms, 2 for 10 ms.
    expect(m.windowMs).toBe(40);
    expect(m.mean).toBeCloseTo((40 + 30) / 40, 12);
    // A quarter of the time at 1: more than 5 %.
    expect(m.p5).toBe(1);
  });

  it('has no window for a round with no length, and none for no rounds', () => {
    expect(closedLoopInFlight([], 4)).toBeNull();
    expect(closedLoopInFlight([[span(5, 5)]], 1)).toBeNull();
  });
});

describe('open-loop rate', () => {
  it('compares the sends with the schedule that was drawn, not with the asked rate', () => {
    const round = [0, 100, 200, 300, 400].map((t) => ({ scheduledMs: t, sendMs: t }));
    const r = openLoopRate([round])!;
    expect(r.achievedPerSec).toBe(10);
    expect(r.scheduledPerSec).toBe(10);
    expect(r.lateMs).toBe(0);
    // The same schedule sent ever later: 4 gaps over 800 ms.
    const lagging = round.map((s, i) => ({ ...s, sendMs: s.scheduledMs * 2 + i }));
    const slow = openLoopRate([lagging])!;
    expect(slow.achievedPerSec).toBeCloseTo((4 / 804) * 1000, 9);
    expect(slow.lateMs).toBe(404);
  });

  it('has no rate for a burst (all scheduled at once)', () => {
    expect(openLoopRate([[0, 0, 0].map((t, i) => ({ scheduledMs: t, sendMs: i }))])).toBeNull();
  });

  it('names the sends a full cap held back, and those queued behind them', () => {
    // Cap 1: request 1 is due at 5 while request 0 runs until 50; request 2, due at 50, waits behind request 1.
    const spans = [
      { ...span(0, 50), scheduledMs: 0 },
      { ...span(50, 60), scheduledMs: 5 },
      { ...span(60, 70), scheduledMs: 50 },
      { ...span(100, 110), scheduledMs: 100 },
    ];
    expect([...heldByCap(spans, 1)]).toEqual([1, 2]);
  });
});
