import type { CheckFact, CheckStatus, HostPressure, OfferedLoad } from '../../shared/run-record.js';
import { OFFERED_MIN_SHARE } from '../../shared/offered-load.js';
import { STATUS_SEVERITY, worstStatus } from '../../shared/check-status.js';
import { hostBusy, hostPressureText } from '../telemetry/host-pressure.js';
import { fmtNum, fmtPct } from '../metrics/format.js';
import { CLIENT_LIMITS } from './client-limits.js';
import { plural } from './helpers.js';
import { defineCheck } from './define.js';
import { verdict, type Judged } from './verdict.js';

export { CLIENT_LIMITS } from './client-limits.js';

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
}

/** One reason behind the client check's verdict. */
interface ClientFinding {
  status: CheckStatus;
  code: string;
  text: string;
}

/** Closed loop: did the lanes hold the asked concurrency (requests, or conversations in multi-turn)? */
function offeredConcurrencyFinding(input: ClientInput, facts: Record<string, CheckFact>): ClientFinding | null {
  const o = input.offered;
  const asked = input.askedConcurrency;
  const mean = o?.conversationsMean ?? o?.inFlightMean;
  if (mean === undefined || asked === undefined || asked <= 0) return null;
  const p5 = o?.conversationsP5 ?? o?.inFlightP5 ?? null;
  const what = o?.conversationsMean !== undefined ? 'conversations' : 'requests';
  const ratio = mean / asked;
  Object.assign(facts, { achievedConcurrency: mean, achievedConcurrencyP5: p5, askedConcurrency: asked, ratio });
  if (o?.conversationsMean !== undefined) facts.achievedRequestsInFlight = o.inFlightMean ?? null;
  const held = `${fmtNum(mean)} ${what} in flight on average of c=${asked} asked (${fmtPct(ratio)}, p5 ${p5 ?? '—'})`;
  if (ratio >= OFFERED_MIN_SHARE) return { status: 'pass', code: 'offered-as-asked', text: held };
  const afterFailures = o?.shortfallAfterFailures ?? 0;
  facts.shortfallAfterFailures = afterFailures;
  if (afterFailures >= 0.5) {
    return {
      status: 'warn',
      code: 'offered-below-asked-failures',
      text: `${held}: ${fmtPct(afterFailures)} of the shortfall came after requests the server failed fast (the errors check judges them), not from the client`,
    };
  }
  return {
    status: 'fail',
    code: 'offered-below-asked',
    text: `${held}, below ${fmtPct(OFFERED_MIN_SHARE)}: the client was the bottleneck; this level offered c≈${fmtNum(mean)}, not c=${asked}`,
  };
}

/** Open loop: were the requests sent at the rate their schedule asked? */
function offeredRateFinding(input: ClientInput, facts: Record<string, CheckFact>): ClientFinding | null {
  const o = input.offered;
  if (o?.ratePerSec === undefined || o.scheduledRatePerSec === undefined) return null;
  const ratio = o.ratePerSec / o.scheduledRatePerSec;
  Object.assign(facts, {
    achievedRate: o.ratePerSec,
    scheduledRate: o.scheduledRatePerSec,
    askedRate: input.askedRate ?? null,
    ratio,
  });
  const sent = `${fmtNum(o.ratePerSec)} req/s sent of the schedule's ${fmtNum(o.scheduledRatePerSec)} (${fmtPct(ratio)}${input.askedRate !== undefined ? `; ${input.askedRate} req/s asked` : ''})`;
  // A short schedule's rate moves with a few ms of lag: lateness (summed over the rounds) within the schedule-lag
  // limits per round is judged as those limits judge a lag (pass, then warn); beyond the fail limit it fails.
  const lateMs = input.rateLateMs ?? 0;
  const rounds = input.rateRounds ?? 1;
  facts.rateLateMs = lateMs;
  if (ratio >= OFFERED_MIN_SHARE || lateMs <= rounds * CLIENT_LIMITS.scheduleLagWarnMs)
    return { status: 'pass', code: 'offered-as-asked', text: sent };
  if ((o.heldByCap ?? 0) > 0) {
    facts.heldByCap = o.heldByCap ?? 0;
    return {
      status: 'warn',
      code: 'rate-held-by-cap',
      text: `${sent}: the --max-concurrency cap of ${input.cap ?? '?'} was full for ${plural(o.heldByCap ?? 0, 'send')} (the server was slower than the rate), not the client`,
    };
  }
  return {
    status: lateMs > rounds * CLIENT_LIMITS.failMs ? 'fail' : 'warn',
    code: 'offered-below-asked',
    text: `${sent}, below ${fmtPct(OFFERED_MIN_SHARE)}, ${fmtNum(lateMs)} ms behind the schedule: the client was the bottleneck; this level offered ${fmtNum(o.ratePerSec)} req/s`,
  };
}

/** Event-loop lag and schedule lag against CLIENT_LIMITS; a lag while the host was busy is named as the host's. */
function lagFinding(input: ClientInput): ClientFinding {
  const found = ownLagFinding(input);
  if (found.code !== 'client-lag') return found;
  const busy = hostBusy(input.host);
  const pressure = hostPressureText(input.host);
  if (busy === true) {
    return {
      status: found.status,
      code: 'host-busy',
      text: `${found.figures}: the host was busy (${pressure}): other processes kept this client from the CPU, so its timings are not the server's`,
    };
  }
  return { ...found, text: `${found.text} (${busy === false ? `the host was not busy: ${pressure}` : pressure})` };
}

function ownLagFinding(input: ClientInput): ClientFinding & { figures: string } {
  const { loopLagP99Ms: loop, scheduleLagP99Ms: sched } = input;
  const parts: string[] = [];
  if (loop !== null) parts.push(`event-loop lag p99 ${fmtNum(loop)} ms`);
  if (sched !== null) parts.push(`schedule lag p99 ${fmtNum(sched)} ms`);
  const figures = parts.join(', ');
  if ((loop !== null && loop > CLIENT_LIMITS.failMs) || (sched !== null && sched > CLIENT_LIMITS.failMs)) {
    return {
      figures,
      status: 'fail',
      code: 'client-lag',
      text: `${figures} (over ${CLIENT_LIMITS.failMs} ms): the client is the bottleneck; its timings are not the server's`,
    };
  }
  if (
    (loop !== null && loop > CLIENT_LIMITS.loopLagWarnMs) ||
    (sched !== null && sched > CLIENT_LIMITS.scheduleLagWarnMs)
  ) {
    return {
      figures,
      status: 'warn',
      code: 'client-lag',
      text: `${figures} (limits ${CLIENT_LIMITS.loopLagWarnMs} / ${CLIENT_LIMITS.scheduleLagWarnMs} ms): the client may be the bottleneck`,
    };
  }
  if (loop === null) {
    return {
      figures,
      status: 'warn',
      code: 'loop-lag-unknown',
      text: `event-loop lag was not measured${figures ? ` (${figures})` : ''}: the client's own delay is unknown`,
    };
  }
  return { figures, status: 'pass', code: 'kept-up', text: figures };
}

/**
 * client: servebench itself was not the bottleneck. It offered the asked load (closed loop: time-averaged requests in
 * flight, or conversations in multi-turn, at least OFFERED_MIN_SHARE of the concurrency; open loop: the schedule's
 * rate), and its event-loop lag and schedule lag stayed small. A shortfall that followed fast server failures, or
 * that a full --max-concurrency cap caused, only warns: it is not the client's. Code and facts name the worst reason.
 */
export function clientCheck(input: ClientInput): Judged {
  const facts: Record<string, CheckFact> = {
    loopLagP99Ms: input.loopLagP99Ms,
    scheduleLagP99Ms: input.scheduleLagP99Ms,
    hostBusy: hostBusy(input.host),
    hostCpuSomeShare: input.host?.cpuSomeShare ?? null,
    hostSelfWaitShare: input.host?.selfWaitShare ?? null,
  };
  const busy = hostBusy(input.host) === true;
  const findings = [offeredConcurrencyFinding(input, facts), offeredRateFinding(input, facts), lagFinding(input)]
    .filter((f): f is ClientFinding => f !== null)
    // A client that fell short while other processes held the CPU was held back by the host, not by its own work.
    .map((f) =>
      busy && f.code === 'offered-below-asked'
        ? { ...f, text: `${f.text}; the host was busy (${hostPressureText(input.host)}): other processes held it back` }
        : f,
    );
  const status = worstStatus(findings.map((f) => f.status));
  const worst = findings.find((f) => f.status === status) as ClientFinding;
  // The failing reason first, then the figures that passed.
  const ordered = [...findings].sort((a, b) => STATUS_SEVERITY[b.status] - STATUS_SEVERITY[a.status]);
  const detail = ordered
    .map((f) => f.text)
    .filter(Boolean)
    .join('; ');
  return status === 'pass'
    ? verdict('client', 'pass', 'kept-up', facts, `${detail}: the client kept up`)
    : verdict('client', status, worst.code, facts, detail);
}

export const client = defineCheck('client', {
  limits: { ...CLIENT_LIMITS, offeredMinShare: OFFERED_MIN_SHARE },
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
    }),
});
