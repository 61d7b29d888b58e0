import { fmtNumber } from '../../shared/format.js';
import type { RequestRecord } from '../../shared/request-record.js';
import type { CheckFact, CheckStatus, RoundResult } from '../../shared/run-record.js';
import { isMeasured } from './request-metrics.js';
import { coefficientOfVariation } from './throughput.js';

/**
 * The share of levels an ideal open-loop server (steady speed; only the Poisson arrivals random) fails round spread
 * in, at most: test/core/metrics/open-loop-spread.test.ts measures it over simulated levels on a virtual clock,
 * below, at and past the server's capacity, from 2 rounds of 10 requests up (none of 300 levels in any of its 20
 * cases; the raw 15 % rule failed up to 60 % of them).
 */
export const OPEN_LOOP_FALSE_FAIL_RATE = 0.01;

/** One complete open-loop round: what it delivered, and over what its own arrivals came. */
export interface OpenLoopRound {
  outputTokens: number;
  requests: number;
  /** First send to last end (the round's throughput window), ms. */
  windowMs: number;
  /** First to last scheduled arrival, ms (0 for a burst). */
  arrivalSpanMs: number;
}

/** What the round-spread check judges in open loop. */
export interface OpenLoopSpread {
  /** CV of each round's output tok/s over what its arrivals offered (see openLoopSpread); null when undefined. */
  shareCv: number | null;
  /** Each round's delivered share, 1 for the best. */
  shares: number[];
  /** Each round's arrival rate as scheduled, req/s (requests after the first over the arrival span); null for one. */
  offeredReqPerSec: Array<number | null>;
}

/**
 * In open loop a round's throughput follows its own random arrivals: 40 Poisson arrivals at 4 req/s span 10 s
 * give or take 16 %, and an idle server's output tok/s moves with them. Each round is judged against what its
 * arrivals offered instead: its tokens over its arrival span plus the shortest drain (last arrival to last end) of
 * any round, capped at the best round's output tok/s (what the server showed it can do when arrivals outran it).
 * A steady server delivers the same share of that in every round, below capacity (it keeps pace with the arrivals)
 * and past it (it runs at its own speed); a server whose speed changed between rounds does not.
 */
export function openLoopSpread(rounds: readonly OpenLoopRound[]): OpenLoopSpread {
  const drains = rounds.map((r) => Math.max(0, r.windowMs - r.arrivalSpanMs));
  const drainMin = drains.length > 0 ? Math.min(...drains) : 0;
  const rate = (r: OpenLoopRound): number => (r.windowMs > 0 ? r.outputTokens / (r.windowMs / 1000) : 0);
  const best = rounds.reduce((m, r) => Math.max(m, rate(r)), 0);
  const shares = rounds.map((r) => {
    const spanMs = r.arrivalSpanMs + drainMin;
    const offered = spanMs > 0 ? r.outputTokens / (spanMs / 1000) : best;
    const expected = Math.min(offered, best);
    return expected > 0 ? rate(r) / expected : 0;
  });
  return {
    shareCv: coefficientOfVariation(shares),
    shares,
    offeredReqPerSec: rounds.map((r) =>
      r.requests > 1 && r.arrivalSpanMs > 0 ? (r.requests - 1) / (r.arrivalSpanMs / 1000) : null,
    ),
  };
}

/**
 * The complete rounds of an open-loop level, from its records: a round's arrivals are its measured requests'
 * scheduled sends (a conversation's later turns have none: they follow the server, not the schedule). Null when
 * the level has no schedule (closed loop) or a round has no scheduled request.
 */
export function openLoopRounds(
  records: readonly RequestRecord[],
  complete: readonly RoundResult[],
): OpenLoopRound[] | null {
  const rounds: OpenLoopRound[] = [];
  for (const round of complete) {
    const inRound = records.filter((r) => isMeasured(r) && r.round === round.round);
    const scheduled = inRound.flatMap((r) => (r.scheduledMs !== undefined ? [r.scheduledMs] : []));
    if (scheduled.length === 0) return null;
    rounds.push({
      outputTokens: inRound.reduce((a, r) => a + (r.ok ? r.nOut : 0), 0),
      requests: scheduled.length,
      windowMs: round.windowMs,
      arrivalSpanMs:
        scheduled.reduce((a, t) => Math.max(a, t), -Infinity) - scheduled.reduce((a, t) => Math.min(a, t), Infinity),
    });
  }
  return rounds.length > 0 ? rounds : null;
}

/** The open-loop verdict of the round-spread check: status, code and facts (the prose renderer words them). */
export interface OpenLoopJudgement {
  status: CheckStatus;
  code: 'steady' | 'spread-follows-arrivals' | 'server-speed-changed';
  facts: Record<string, CheckFact>;
}

/**
 * Judges an open-loop level's rounds against what their arrivals offered (openLoopSpread): within `limit` the
 * server's speed held, whatever the raw CV (`cv`, of output tok/s); beyond it the speed changed between rounds.
 */
export function judgeOpenLoopSpread(cv: number, limit: number, rounds: readonly OpenLoopRound[]): OpenLoopJudgement {
  const spread = openLoopSpread(rounds);
  const shareCv = spread.shareCv ?? 0;
  const rates = spread.offeredReqPerSec.map((r) => (r === null ? '—' : fmtNumber(r))).join(', ');
  const facts: Record<string, CheckFact> = {
    cv,
    limit,
    shareCv,
    offeredReqPerSec: rates,
    shares: spread.shares.map((x) => fmtNumber(x)).join(', '),
    falseFailRate: OPEN_LOOP_FALSE_FAIL_RATE,
  };
  if (shareCv > limit) return { status: 'fail', code: 'server-speed-changed', facts };
  if (cv <= limit) return { status: 'pass', code: 'steady', facts };
  return { status: 'pass', code: 'spread-follows-arrivals', facts };
}
