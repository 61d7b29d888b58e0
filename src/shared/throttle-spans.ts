import type { GpuSample, ThrottleEpisode } from './telemetry.js';

/** The kinds of slowdown a GPU reports; each is shown apart. */
export type ThrottleKind = ThrottleEpisode['kind'];

/** A stretch of one GPU's samples in one slowdown kind, on the run's clock (ms). */
export type ThrottleSpan = Pick<ThrottleEpisode, 'gpu' | 'kind' | 'startMs' | 'endMs'>;

/** Which kinds are throttling: the clock was lowered. A power cap holds the card at its limit, which is normal at full load. */
export const THROTTLING: Readonly<Record<ThrottleKind, boolean>> = {
  thermal: true,
  'hw-slowdown': true,
  'power-cap': false,
};

/** Each kind's name for people. */
export const THROTTLE_KIND_LABELS: Readonly<Record<ThrottleKind, string>> = {
  thermal: 'thermal slowdown',
  'hw-slowdown': 'hardware slowdown',
  'power-cap': 'power cap',
};

const isKind = (c: string): c is ThrottleKind => c in THROTTLING;

/**
 * The stretches each GPU spent in one kind of slowdown, in time order. A span runs from its first sample to the
 * next sample of that GPU in another state (the state holds until the next reading); a last open span ends at its
 * last sample, and a span of no length (one final sample) is left out.
 */
export function throttleSpans(samples: readonly GpuSample[]): ThrottleSpan[] {
  const spans: ThrottleSpan[] = [];
  const byGpu = new Map<number, GpuSample[]>();
  for (const s of samples) (byGpu.get(s.gpu) ?? byGpu.set(s.gpu, []).get(s.gpu))?.push(s);
  for (const [gpu, list] of [...byGpu].sort((a, b) => a[0] - b[0])) {
    const sorted = [...list].sort((a, b) => a.tMs - b.tMs);
    let open: ThrottleSpan | null = null;
    for (const s of sorted) {
      if (open) open.endMs = s.tMs;
      if (open && open.kind === s.class) continue;
      if (open) spans.push(open);
      open = isKind(s.class) ? { gpu, kind: s.class, startMs: s.tMs, endMs: s.tMs } : null;
    }
    if (open) spans.push(open);
  }
  return spans.filter((s) => s.endMs > s.startMs).sort((a, b) => a.startMs - b.startMs || a.gpu - b.gpu);
}

/** The highest value a field of the samples records (a GPU's max SM clock, its power limit); null when none. */
export function recordedCeiling(samples: readonly GpuSample[], field: 'maxSmClockMhz' | 'powerLimitW'): number | null {
  let top: number | null = null;
  for (const s of samples) {
    const v = s[field];
    if (typeof v === 'number' && Number.isFinite(v) && v > 0) top = top === null ? v : Math.max(top, v);
  }
  return top;
}
