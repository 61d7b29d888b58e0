import type { CheckStatus, HostPressure, OfferedLoad, TtftSplit } from '../../shared/run-record.js';
import { OFFERED_MIN_SHARE } from '../../shared/offered-load.js';
import { worstStatus } from '../../shared/check-status.js';
import { hostBusy } from '../telemetry/host-pressure.js';
import { CLIENT_LIMITS } from './client-limits.js';
import { defineCheck } from './define.js';
import { judged, type Facts, type Judged } from './verdict.js';

/** Inputs of the client check; lags in ms, null where not measured (schedule lag exists only in open loop). */
export interface ClientInput {
  loopLagP99Ms: number | null;
  /** Open loop: p99 of send - scheduled over the sends the client answers for (not those a full cap held back). */
  scheduleLagP99Ms: number | null;
  /** The load really offered (absent: not measured); see src/shared/offered-load.ts. */
  offered?: OfferedLoad;
  /** Closed loop: the asked concurrency. */
  askedConcurrency?: number;
  /** Open loop: the asked rate (req/s), and how much longer the sends took than their schedules (summed over rounds). */
  askedRate?: number;
  rateLateMs?: number;
  rateRounds?: number;
  /** Open loop: the --max-concurrency cap, if any. */
  cap?: number;
  /** The host's CPU pressure over the level (null: not readable): a lag while it was busy is the host's. */
  host?: HostPressure | null;
  /** Where TTFT went (null: no TTFT): its rest beyond the server's parts is the network's, the HTTP stack's and ours. */
  ttftSplit?: TtftSplit | null;
}

/** A rest of TTFT beyond the server's parts at or above this share is named in the facts as large. */
const TTFT_REST_LARGE_SHARE = 0.5;

/** The client's share of TTFT as facts: the rest's ms and share, and whether it is large (only with both server parts known). */
function ttftRestFacts(split: TtftSplit | null | undefined, facts: Facts): void {
  const rest = split?.parts.find((p) => p.part === 'rest');
  if (!split || !rest || rest.ms === null || split.restShare === null) return;
  Object.assign(facts, {
    ttftBasis: split.basis,
    ttftMs: split.ttftMs,
    ttftRestMs: rest.ms,
    ttftRestShare: split.restShare,
    ttftRestUnknownParts: split.unknown.join(',') || null,
    ttftRestLarge: split.unknown.length === 0 && split.restShare >= TTFT_REST_LARGE_SHARE,
  });
}

/** One reason behind the client check's verdict; its figures go into the facts. */
interface ClientFinding {
  /** Which part of the client's work: the concurrency it held, the rate it sent at, or its own lag. */
  part: 'concurrency' | 'rate' | 'lag';
  status: CheckStatus;
  code: string;
}

/** Closed loop: did the lanes hold the asked concurrency (requests, or conversations in multi-turn)? */
function offeredConcurrencyFinding(input: ClientInput, facts: Facts): ClientFinding | null {
  const o = input.offered;
  const asked = input.askedConcurrency;
  const mean = o?.conversationsMean ?? o?.inFlightMean;
  if (mean === undefined || asked === undefined || asked <= 0) return null;
  const ratio = mean / asked;
  Object.assign(facts, {
    achievedConcurrency: mean,
    achievedConcurrencyP5: o?.conversationsP5 ?? o?.inFlightP5 ?? null,
    askedConcurrency: asked,
    ratio,
    inFlightOf: o?.conversationsMean !== undefined ? 'conversations' : 'requests',
  });
  if (o?.conversationsMean !== undefined) facts.achievedRequestsInFlight = o.inFlightMean ?? null;
  if (ratio >= OFFERED_MIN_SHARE) return { part: 'concurrency', status: 'pass', code: 'offered-as-asked' };
  const afterFailures = o?.shortfallAfterFailures ?? 0;
  facts.shortfallAfterFailures = afterFailures;
  return afterFailures >= 0.5
    ? { part: 'concurrency', status: 'warn', code: 'offered-below-asked-failures' }
    : { part: 'concurrency', status: 'fail', code: 'offered-below-asked' };
}

/** Open loop: were the requests sent at the rate their schedule asked? */
function offeredRateFinding(input: ClientInput, facts: Facts): ClientFinding | null {
  const o = input.offered;
  if (o?.ratePerSec === undefined || o.scheduledRatePerSec === undefined) return null;
  const ratio = o.ratePerSec / o.scheduledRatePerSec;
  // A short schedule's rate moves with a few ms of lag: lateness (summed over the rounds) within the schedule-lag
  // limits per round is judged as those limits judge a lag (pass, then warn); beyond the fail limit it fails.
  const lateMs = input.rateLateMs ?? 0;
  const rounds = input.rateRounds ?? 1;
  Object.assign(facts, {
    achievedRate: o.ratePerSec,
    scheduledRate: o.scheduledRatePerSec,
    askedRate: input.askedRate ?? null,
    ratio,
    rateLateMs: lateMs,
  });
  if (ratio >= OFFERED_MIN_SHARE || lateMs <= rounds * CLIENT_LIMITS.scheduleLagWarnMs)
    return { part: 'rate', status: 'pass', code: 'offered-as-asked' };
  if ((o.heldByCap ?? 0) > 0) {
    Object.assign(facts, { heldByCap: o.heldByCap ?? 0, cap: input.cap ?? null });
    return { part: 'rate', status: 'warn', code: 'rate-held-by-cap' };
  }
  return {
    part: 'rate',
    status: lateMs > rounds * CLIENT_LIMITS.failMs ? 'fail' : 'warn',
    code: 'offered-below-asked',
  };
}

/** Event-loop lag and schedule lag against CLIENT_LIMITS; a lag while the host was busy is named as the host's. */
function lagFinding(input: ClientInput): ClientFinding {
  const { loopLagP99Ms: loop, scheduleLagP99Ms: sched } = input;
  const over = (lag: number | null, limit: number): boolean => lag !== null && lag > limit;
  const lagged = (status: CheckStatus): ClientFinding => ({
    part: 'lag',
    status,
    code: hostBusy(input.host) === true ? 'host-busy' : 'client-lag',
  });
  if (over(loop, CLIENT_LIMITS.failMs) || over(sched, CLIENT_LIMITS.failMs)) return lagged('fail');
  if (over(loop, CLIENT_LIMITS.loopLagWarnMs) || over(sched, CLIENT_LIMITS.scheduleLagWarnMs)) return lagged('warn');
  if (loop === null) return { part: 'lag', status: 'warn', code: 'loop-lag-unknown' };
  return { part: 'lag', status: 'pass', code: 'kept-up' };
}

/**
 * client: servebench itself was not the bottleneck. It offered the asked load (closed loop: time-averaged requests in
 * flight, or conversations in multi-turn, at least OFFERED_MIN_SHARE of the concurrency; open loop: the schedule's
 * rate), and its event-loop lag and schedule lag stayed small. A shortfall that followed fast server failures, or
 * that a full --max-concurrency cap caused, only warns: it is not the client's. Code and facts name the worst reason;
 * each part's own code and status are facts too (concurrencyFinding, rateFinding, lagFinding and their statuses).
 */
export function clientCheck(input: ClientInput): Judged {
  const facts: Facts = {
    loopLagP99Ms: input.loopLagP99Ms,
    scheduleLagP99Ms: input.scheduleLagP99Ms,
    hostBusy: hostBusy(input.host),
    hostCpuSomeShare: input.host?.cpuSomeShare ?? null,
    hostSelfWaitShare: input.host?.selfWaitShare ?? null,
  };
  ttftRestFacts(input.ttftSplit, facts);
  const findings = [
    offeredConcurrencyFinding(input, facts),
    offeredRateFinding(input, facts),
    lagFinding(input),
  ].filter((f): f is ClientFinding => f !== null);
  for (const f of findings) Object.assign(facts, { [`${f.part}Finding`]: f.code, [`${f.part}Status`]: f.status });
  const status = worstStatus(findings.map((f) => f.status));
  const worst = findings.find((f) => f.status === status) as ClientFinding;
  return judged('client', status, status === 'pass' ? 'kept-up' : worst.code, facts);
}

export const client = defineCheck('client', {
  limits: { ...CLIENT_LIMITS, offeredMinShare: OFFERED_MIN_SHARE, ttftRestLargeShare: TTFT_REST_LARGE_SHARE },
  evaluate: (e) =>
    clientCheck({
      loopLagP99Ms: e.load.loopLagP99Ms,
      scheduleLagP99Ms: e.load.scheduleLagP99Ms,
      ...(e.load.offered ? { offered: e.load.offered } : {}),
      askedConcurrency: e.load.askedConcurrency,
      askedRate: e.load.askedRate,
      rateLateMs: e.load.rateLateMs,
      rateRounds: e.load.rateRounds,
      cap: e.load.cap,
      host: e.host,
      ttftSplit: e.ttftSplit,
    }),
});
