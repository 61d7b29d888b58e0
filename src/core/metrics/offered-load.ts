import type { RequestRecord } from '../../shared/request-record.js';
import type { OfferedLoad } from '../../shared/run-record.js';
import { closedLoopInFlight, heldByCap, openLoopRate } from '../../shared/offered-load.js';
import type { FlightSpan, RateMeasure } from '../../shared/offered-load.js';

/** The asked load of a level: closed loop (concurrency), or open loop (rate, with its in-flight cap or none). */
export interface AskedLoad {
  concurrency: number;
  /** Open loop: the asked rate (absent for a burst, which has none, and in closed loop). */
  rate?: number;
  /** Open loop: the trace or Poisson schedule was followed (scheduledMs on the records). */
  openLoop: boolean;
  /** Open loop: --max-concurrency; absent or 0: no cap. */
  cap?: number;
}

const spanOf = (r: RequestRecord): FlightSpan => ({ sendMs: r.sendMs, endMs: r.endMs ?? r.sendMs, ok: r.ok });

function byRound<T>(records: readonly RequestRecord[], map: (r: RequestRecord[]) => T[]): T[][] {
  const rounds = new Map<number, RequestRecord[]>();
  for (const r of records) {
    const list = rounds.get(r.round);
    if (list) list.push(r);
    else rounds.set(r.round, [r]);
  }
  return [...rounds.keys()].sort((a, b) => a - b).map((k) => map(rounds.get(k) as RequestRecord[]));
}

/** Multi-turn: each conversation of a round as one span, first turn's send to last turn's end, ok if every turn was. */
function conversationSpans(records: readonly RequestRecord[]): FlightSpan[] {
  const convs = new Map<number, FlightSpan>();
  for (const r of records) {
    const c = r.workload?.conversation ?? -1 - r.id;
    const s = spanOf(r);
    const had = convs.get(c);
    convs.set(
      c,
      had ? { sendMs: Math.min(had.sendMs, s.sendMs), endMs: Math.max(had.endMs, s.endMs), ok: had.ok && s.ok } : s,
    );
  }
  return [...convs.values()];
}

/** The offered load and the sends whose lag the client answers for (not those a full cap held back). */
export interface OfferedResult {
  offered: OfferedLoad;
  /** Open loop: the measured records whose schedule lag is the client's (the rest waited for the cap). */
  clientLagged: RequestRecord[];
  /** Open loop: the rate measure whole (how late the sends were, over how many rounds). */
  rate?: RateMeasure;
}

/** The load the client really offered over a level's measured requests (see src/shared/offered-load.ts). */
export function offeredLoadOf(measured: readonly RequestRecord[], asked: AskedLoad): OfferedResult {
  const offered: OfferedLoad = {};
  if (measured.length === 0) return { offered, clientLagged: [] };
  if (!asked.openLoop) {
    const requests = closedLoopInFlight(
      byRound(measured, (rs) => rs.map(spanOf)),
      asked.concurrency,
    );
    if (requests) {
      offered.inFlightMean = requests.mean;
      offered.inFlightP5 = requests.p5;
      offered.windowMs = requests.windowMs;
    }
    const multiTurn = measured.some((r) => r.workload?.turn !== undefined);
    const judged = multiTurn ? closedLoopInFlight(byRound(measured, conversationSpans), asked.concurrency) : requests;
    if (multiTurn && judged) {
      offered.conversationsMean = judged.mean;
      offered.conversationsP5 = judged.p5;
    }
    if (judged && judged.shortfallMs > 0) offered.shortfallAfterFailures = judged.afterFailureMs / judged.shortfallMs;
    return { offered, clientLagged: [] };
  }
  const scheduled = measured.filter((r) => r.scheduledMs !== undefined);
  const rate = openLoopRate(
    byRound(scheduled, (rs) => rs.map((r) => ({ sendMs: r.sendMs, scheduledMs: r.scheduledMs as number }))),
  );
  if (rate) {
    offered.ratePerSec = rate.achievedPerSec;
    offered.scheduledRatePerSec = rate.scheduledPerSec;
  }
  const withRate = rate ? { rate } : {};
  if (!asked.cap) return { offered, clientLagged: scheduled, ...withRate };
  // Every request counts for what was in flight; only the scheduled ones (a conversation's first turn) are judged.
  const held = heldByCap(
    measured.map((r) => ({ ...spanOf(r), scheduledMs: r.scheduledMs })),
    asked.cap,
  );
  offered.heldByCap = held.size;
  return { offered, clientLagged: measured.filter((r, i) => r.scheduledMs !== undefined && !held.has(i)), ...withRate };
}
