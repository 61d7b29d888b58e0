/**
 * Offered load from the records' own stamps: how many requests were really in flight (closed loop), and how fast
 * they were really sent (open loop). Shared by the engine's level summary and the app's live view, so both say
 * the same. Definitions (docs/offered-load.md):
 *
 * In flight at t: requests with send <= t < end (send: handed to the HTTP client; end: the response's end on the
 * wire, or the failure's moment).
 *
 * Judged window of a closed-loop round with C lanes and N requests (N >= C): from the round's first send to the
 * later of its last send and the moment its unanswered requests fell below C (the (N - C + 1)-th end). At every
 * moment of that window either a request was waiting to be sent, or at least C requests were unanswered, so a client
 * that keeps up holds C in flight there (but for the microseconds of each refill) and any shortfall is the client's.
 * After it the round drains: fewer than C requests are left, all of them sent, and lanes go idle by design.
 */
import type { OfferedLoad } from './run-record.js';

/** A request (or a whole conversation) as the measure sees it. */
export interface FlightSpan {
  sendMs: number;
  endMs: number;
  ok: boolean;
}

/** Requests in flight over the judged windows of a closed loop's rounds. */
export interface InFlightMeasure {
  /** Time-averaged count in flight over the windows: the integral of the count over their summed length. */
  mean: number;
  /** Time-weighted p5: the largest count that was in flight (or more) during more than 95 % of the windows. */
  p5: number;
  /** The windows' summed length, ms. */
  windowMs: number;
  /** Slot-time short of the lanes over the windows (count x ms). */
  shortfallMs: number;
  /** The part of shortfallMs spent refilling after a request that failed (the server refused or failed it fast). */
  afterFailureMs: number;
}

/** Share of the asked load below which a level was not the level it is named (the client check fails it). */
export const OFFERED_MIN_SHARE = 0.95;

const overlap = (a: number, b: number, lo: number, hi: number): number =>
  Math.max(0, Math.min(b, hi) - Math.max(a, lo));

/** One round's window [start, end] (see the module note), or null when it has no length. */
export function judgedWindow(spans: readonly FlightSpan[], lanes: number): { startMs: number; endMs: number } | null {
  const n = spans.length;
  if (n === 0 || lanes < 1) return null;
  const held = Math.min(lanes, n);
  const ends = spans.map((s) => s.endMs).sort((a, b) => a - b);
  const startMs = spans.reduce((m, s) => Math.min(m, s.sendMs), Infinity);
  const lastSend = spans.reduce((m, s) => Math.max(m, s.sendMs), -Infinity);
  const endMs = Math.max(lastSend, ends[n - held] as number);
  return endMs > startMs ? { startMs, endMs } : null;
}

/**
 * The in-flight measure of closed-loop rounds run with `lanes` lanes (the asked concurrency). The shortfall is
 * attributed request by request: in a closed loop the k-th send after the first C refills the slot of the k-th end,
 * so the gap between them belongs to that ended request (failed or not); the initial fan-out belongs to the client.
 * Null when no round has a window.
 */
export function closedLoopInFlight(
  rounds: ReadonlyArray<readonly FlightSpan[]>,
  lanes: number,
): InFlightMeasure | null {
  const timeAt = new Map<number, number>();
  let windowMs = 0;
  let area = 0;
  let afterFailureMs = 0;
  let shortfallMs = 0;
  for (const spans of rounds) {
    const w = judgedWindow(spans, lanes);
    if (!w) continue;
    const held = Math.min(lanes, spans.length);
    const len = w.endMs - w.startMs;
    windowMs += len;
    const r = sweep(spans, w.startMs, w.endMs);
    area += r.area;
    for (const [count, ms] of r.timeAt) timeAt.set(count, (timeAt.get(count) ?? 0) + ms);
    shortfallMs += Math.max(0, held * len - r.area);
    const sends = spans.map((s) => s.sendMs).sort((a, b) => a - b);
    const ends = [...spans].sort((a, b) => a.endMs - b.endMs);
    ends.forEach((e, k) => {
      if (e.ok) return;
      const refill = sends[held + k] ?? w.endMs;
      afterFailureMs += overlap(e.endMs, refill, w.startMs, w.endMs);
    });
  }
  if (windowMs <= 0) return null;
  return {
    mean: area / windowMs,
    p5: timeWeightedPercentile(timeAt, windowMs, 5),
    windowMs,
    shortfallMs,
    afterFailureMs: Math.min(afterFailureMs, shortfallMs),
  };
}

/**
 * The count in flight over [lo, hi] as a step function: its integral and the time spent at each count. The sends and
 * ends are walked as two sorted columns (no pair per event), an end before a send at one instant: a slot freed and
 * refilled in the same millisecond was never two requests.
 */
function sweep(spans: readonly FlightSpan[], lo: number, hi: number): { area: number; timeAt: Map<number, number> } {
  const sends = Float64Array.from(spans, (s) => s.sendMs).sort();
  const ends = Float64Array.from(spans, (s) => Math.max(s.sendMs, s.endMs)).sort();
  const timeAt = new Map<number, number>();
  let count = 0;
  let at = lo;
  let area = 0;
  for (let i = 0, j = 0; i < sends.length || j < ends.length;) {
    const isEnd = j < ends.length && (i === sends.length || ends[j]! <= sends[i]!);
    const t = isEnd ? ends[j++]! : sends[i++]!;
    const from = Math.max(at, lo);
    const to = Math.min(t, hi);
    if (to > from) {
      area += count * (to - from);
      timeAt.set(count, (timeAt.get(count) ?? 0) + (to - from));
    }
    at = Math.max(at, t);
    count += isEnd ? -1 : 1;
  }
  if (hi > at) {
    area += count * (hi - at);
    timeAt.set(count, (timeAt.get(count) ?? 0) + (hi - at));
  }
  return { area, timeAt };
}

/** The smallest count c whose time at or below it reaches q % of the total: c was held or exceeded > (100 - q) %. */
function timeWeightedPercentile(timeAt: ReadonlyMap<number, number>, totalMs: number, q: number): number {
  const counts = [...timeAt.keys()].sort((a, b) => a - b);
  let below = 0;
  for (const c of counts) {
    below += timeAt.get(c) as number;
    if (below >= (q / 100) * totalMs) return c;
  }
  return counts[counts.length - 1] ?? 0;
}

/** A request of an open-loop round: when it was sent, and when its schedule wanted it sent. */
export interface ScheduledSend {
  sendMs: number;
  scheduledMs: number;
}

/** Requests sent per second over open-loop rounds, beside the rate their drawn schedules asked for. */
export interface RateMeasure {
  /** (requests - 1) / (last send - first send), pooled over the rounds: the rate of the sends themselves. */
  achievedPerSec: number;
  /** The same over the scheduled times: what the round's schedule asked (a Poisson draw differs from --rate by chance). */
  scheduledPerSec: number;
  /** How much longer the sends took than their schedule, summed over the rounds, ms. */
  lateMs: number;
  /** Rounds measured (each has at least two requests and a schedule that spans time). */
  rounds: number;
}

/** The achieved and scheduled rate of open-loop rounds; null when no round spans time (a burst has no rate). */
export function openLoopRate(rounds: ReadonlyArray<readonly ScheduledSend[]>): RateMeasure | null {
  let gaps = 0;
  let sendSpan = 0;
  let schedSpan = 0;
  let counted = 0;
  for (const sends of rounds) {
    if (sends.length < 2) continue;
    const span = (pick: (s: ScheduledSend) => number): number =>
      sends.reduce((m, s) => Math.max(m, pick(s)), -Infinity) - sends.reduce((m, s) => Math.min(m, pick(s)), Infinity);
    const sched = span((s) => s.scheduledMs);
    if (sched <= 0) continue;
    gaps += sends.length - 1;
    sendSpan += span((s) => s.sendMs);
    schedSpan += sched;
    counted++;
  }
  if (counted === 0 || sendSpan <= 0) return null;
  return {
    achievedPerSec: (gaps / sendSpan) * 1000,
    scheduledPerSec: (gaps / schedSpan) * 1000,
    lateMs: sendSpan - schedSpan,
    rounds: counted,
  };
}

/**
 * Open loop under a cap: the sends the cap held back, those whose scheduled moment found `cap` requests in flight
 * or an earlier request still waiting for the cap (sends leave in schedule order). Their lag is the cap's (the server
 * was slower than the rate), not the client's. Indexes into `spans`.
 */
export function heldByCap(spans: ReadonlyArray<FlightSpan & { scheduledMs?: number }>, cap: number): Set<number> {
  const sends = spans.map((s) => s.sendMs).sort((a, b) => a - b);
  const ends = spans.map((s) => s.endMs).sort((a, b) => a - b);
  // How many of the sorted xs are at or before t (binary search).
  const countBy = (xs: readonly number[], t: number): number => {
    let lo = 0;
    let hi = xs.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((xs[mid] as number) <= t) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  const order = spans
    .map((s, i) => ({ s, i }))
    .filter((e) => e.s.scheduledMs !== undefined)
    .sort((a, b) => (a.s.scheduledMs as number) - (b.s.scheduledMs as number));
  const held = new Set<number>();
  let waiting: (FlightSpan & { scheduledMs?: number }) | null = null;
  for (const { s, i } of order) {
    const at = s.scheduledMs as number;
    // Sent by then (itself left out), less ended by then: a slot freed and taken at that instant is taken.
    const inFlight = countBy(sends, at) - (s.sendMs <= at ? 1 : 0) - countBy(ends, at);
    if (inFlight >= cap || (waiting !== null && waiting.sendMs > at)) {
      held.add(i);
      waiting = s;
    } else waiting = null;
  }
  return held;
}

/** A measured request as the offered-load measure needs it (a record, or a request the live view saw finish). */
export interface OfferedRequest {
  round: number;
  sendMs: number;
  endMs: number;
  ok: boolean;
  /** Open loop: when its schedule wanted it sent. */
  scheduledMs?: number;
  /** Multi-turn: its conversation (the lanes keep conversations in flight). */
  conversation?: number;
}

/** The asked load of a level: closed loop (concurrency), or open loop (rate, with its in-flight cap or none). */
export interface AskedLoad {
  concurrency: number;
  /** Open loop: the schedule (Poisson or trace) was followed, so sends carry scheduledMs. */
  openLoop: boolean;
  /** Open loop: --max-concurrency; absent or 0: no cap. */
  cap?: number;
}

/** The offered load, and what the client check needs beside it. */
export interface OfferedMeasure {
  offered: OfferedLoad;
  /** Open loop: indexes of the scheduled requests whose lag is the client's (the rest waited for a full cap). */
  clientLagged: number[];
  /** Open loop: the rate measure whole (how late the sends were, over how many rounds). */
  rate?: RateMeasure;
}

function byRound<T>(requests: readonly OfferedRequest[], map: (r: OfferedRequest[]) => T[]): T[][] {
  const rounds = new Map<number, OfferedRequest[]>();
  for (const r of requests) {
    const list = rounds.get(r.round);
    if (list) list.push(r);
    else rounds.set(r.round, [r]);
  }
  return [...rounds.keys()].sort((a, b) => a - b).map((k) => map(rounds.get(k) as OfferedRequest[]));
}

/** Multi-turn: each conversation of a round as one span, first turn's send to last turn's end, ok if every turn was. */
function conversationSpans(requests: readonly OfferedRequest[]): FlightSpan[] {
  const convs = new Map<number, FlightSpan>();
  requests.forEach((r, i) => {
    const c = r.conversation ?? -1 - i;
    const had = convs.get(c);
    convs.set(
      c,
      had
        ? { sendMs: Math.min(had.sendMs, r.sendMs), endMs: Math.max(had.endMs, r.endMs), ok: had.ok && r.ok }
        : { sendMs: r.sendMs, endMs: r.endMs, ok: r.ok },
    );
  });
  return [...convs.values()];
}

/** The load really offered over a level's measured requests: in flight (closed loop) or sent per second (open loop). */
export function measureOffered(requests: readonly OfferedRequest[], asked: AskedLoad): OfferedMeasure {
  const offered: OfferedLoad = {};
  if (requests.length === 0) return { offered, clientLagged: [] };
  if (!asked.openLoop) {
    const spans = closedLoopInFlight(
      byRound(requests, (rs) => rs),
      asked.concurrency,
    );
    if (spans) {
      offered.inFlightMean = spans.mean;
      offered.inFlightP5 = spans.p5;
      offered.windowMs = spans.windowMs;
    }
    const multiTurn = requests.some((r) => r.conversation !== undefined);
    const judged = multiTurn ? closedLoopInFlight(byRound(requests, conversationSpans), asked.concurrency) : spans;
    if (multiTurn && judged) {
      offered.conversationsMean = judged.mean;
      offered.conversationsP5 = judged.p5;
    }
    if (judged && judged.shortfallMs > 0) offered.shortfallAfterFailures = judged.afterFailureMs / judged.shortfallMs;
    return { offered, clientLagged: [] };
  }
  const rate = openLoopRate(
    byRound(
      requests.filter((r) => r.scheduledMs !== undefined),
      (rs) => rs as ScheduledSend[],
    ),
  );
  if (rate) {
    offered.ratePerSec = rate.achievedPerSec;
    offered.scheduledRatePerSec = rate.scheduledPerSec;
  }
  const withRate = rate ? { rate } : {};
  const scheduled = requests.flatMap((r, i) => (r.scheduledMs !== undefined ? [i] : []));
  if (!asked.cap) return { offered, clientLagged: scheduled, ...withRate };
  // Every request counts for what was in flight; only the scheduled ones (a conversation's first turn) are judged.
  const held = heldByCap(requests, asked.cap);
  offered.heldByCap = held.size;
  return { offered, clientLagged: scheduled.filter((i) => !held.has(i)), ...withRate };
}
