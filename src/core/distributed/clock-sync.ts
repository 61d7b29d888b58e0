import type { ClockOffset } from '../../shared/distributed.js';
export type { ClockOffset } from '../../shared/distributed.js';

/**
 * One clock ping, NTP style: t1 sent (worker clock), t2 received and t3 answered (rank 0's clock), t4 the answer
 * arrived (worker clock). All in ms.
 */
export interface PingSample {
  t1: number;
  t2: number;
  t3: number;
  t4: number;
}

/** Round trip of a ping, less the time rank 0 held it. */
function pingDelay(s: PingSample): number {
  return s.t4 - s.t1 - (s.t3 - s.t2);
}

/**
 * The offset from pings the way NTP filters them: queueing only ever adds delay, so the minimum-delay sample is the
 * truest; its offset is the midpoint ((t2 - t1) + (t3 - t4)) / 2, and its error is at most half its round trip. Null
 * without a sample.
 */
export function estimateOffset(samples: readonly PingSample[], pings = samples.length): ClockOffset | null {
  let best: PingSample | null = null;
  for (const s of samples) if (!best || pingDelay(s) < pingDelay(best)) best = s;
  if (!best) return null;
  const delay = Math.max(0, pingDelay(best));
  return {
    offsetMs: (best.t2 - best.t1 + (best.t3 - best.t4)) / 2,
    uncertaintyMs: delay / 2,
    rttMs: delay,
    atMs: (best.t1 + best.t4) / 2,
    pings,
  };
}

/** Sends one ping and resolves with its four times; rejects when the link is gone or the answer times out. */
export type Ping = () => Promise<PingSample>;

/** Pings per estimate: enough that one of them meets an idle path, few enough to take milliseconds on a LAN. */
const PINGS_PER_ESTIMATE = 32;

/** Measures the offset with `count` pings one after another (never overlapping: each would queue behind the other). */
export async function measureOffset(ping: Ping, count = PINGS_PER_ESTIMATE): Promise<ClockOffset | null> {
  const samples: PingSample[] = [];
  for (let i = 0; i < count; i++) samples.push(await ping());
  return estimateOffset(samples, count);
}

/**
 * Offset at worker time `t` from the estimates before and after a level: linear between them (a drifting clock moves
 * the offset steadily), the nearest one outside them. Null when there is none.
 */
export function offsetAt(t: number, before: ClockOffset | null, after: ClockOffset | null): number | null {
  if (!before || !after) return (before ?? after)?.offsetMs ?? null;
  const span = after.atMs - before.atMs;
  if (span <= 0 || t <= before.atMs) return before.offsetMs;
  if (t >= after.atMs) return after.offsetMs;
  return before.offsetMs + ((after.offsetMs - before.offsetMs) * (t - before.atMs)) / span;
}

/**
 * Drift between two estimates, in parts per million (µs per s); null when they are too close in time to say, or when
 * the offset moved less than the two uncertainties together (no drift can be told from the noise).
 */
export function driftPpm(before: ClockOffset | null, after: ClockOffset | null): number | null {
  if (!before || !after) return null;
  const span = after.atMs - before.atMs;
  const change = after.offsetMs - before.offsetMs;
  if (span < 1000 || Math.abs(change) <= before.uncertaintyMs + after.uncertaintyMs) return null;
  return (change / span) * 1e6;
}
