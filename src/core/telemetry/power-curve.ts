import type { GpuSample } from '../../shared/telemetry.js';

/**
 * One GPU's power over time as integratePowerJ reads it: linear between readings, the first and last reading held
 * for at most one sample spacing beyond them, nothing known elsewhere. Energies come from prefix sums, so the energy
 * of any interval costs a binary search.
 */
export interface PowerCurve {
  /** Energy (J) drawn over [fromMs, toMs], less idleW wherever the power is known. */
  energyJ(fromMs: number, toMs: number, idleW?: number): number;
  /** Median spacing of the readings (ms); 0 with fewer than two. */
  readonly spacingMs: number;
}

interface Point {
  t: number;
  p: number;
}

/** Median gap between consecutive sorted times (0 with fewer than two). */
export function medianSpacingMs(times: readonly number[]): number {
  const gaps: number[] = [];
  for (let i = 1; i < times.length; i++) gaps.push(times[i]! - times[i - 1]!);
  if (gaps.length === 0) return 0;
  gaps.sort((a, b) => a - b);
  return gaps[Math.floor(gaps.length / 2)]!;
}

/** Builds the power curve of one GPU's samples (readings without power are skipped). */
export function powerCurve(samples: readonly GpuSample[]): PowerCurve {
  const pts: Point[] = samples
    .filter((s) => s.powerW !== null)
    .map((s) => ({ t: s.tMs, p: s.powerW as number }))
    .sort((a, b) => a.t - b.t);
  const spacing = medianSpacingMs(pts.map((p) => p.t));
  // Knots of a piecewise-linear power function: the readings plus the ends of the held stretches.
  const knots: Point[] = [];
  if (pts.length > 0 && spacing > 0) {
    knots.push({ t: pts[0]!.t - spacing, p: pts[0]!.p });
    for (const pt of pts) {
      const last = knots[knots.length - 1]!;
      if (pt.t > last.t) knots.push(pt);
    }
    knots.push({ t: pts[pts.length - 1]!.t + spacing, p: pts[pts.length - 1]!.p });
  }
  const cum: number[] = [0];
  for (let i = 1; i < knots.length; i++) {
    const a = knots[i - 1]!;
    const b = knots[i]!;
    cum.push(cum[i - 1]! + ((a.p + b.p) / 2) * (b.t - a.t));
  }
  const first = knots[0]?.t ?? 0;
  const last = knots[knots.length - 1]?.t ?? 0;

  /** Integral of power (W·ms) and of "power known" (ms) from the first knot to t. */
  const at = (t: number): [number, number] => {
    if (knots.length < 2 || t <= first) return [0, 0];
    if (t >= last) return [cum[cum.length - 1]!, last - first];
    let lo = 0;
    let hi = knots.length - 1;
    while (hi - lo > 1) {
      const mid = (lo + hi) >> 1;
      if (knots[mid]!.t <= t) lo = mid;
      else hi = mid;
    }
    const a = knots[lo]!;
    const b = knots[hi]!;
    const pt = a.p + ((b.p - a.p) * (t - a.t)) / (b.t - a.t);
    return [cum[lo]! + ((a.p + pt) / 2) * (t - a.t), t - first];
  };

  return {
    spacingMs: spacing,
    energyJ(fromMs, toMs, idleW = 0) {
      if (toMs <= fromMs) return 0;
      const [e0, k0] = at(fromMs);
      const [e1, k1] = at(toMs);
      return (e1 - e0 - idleW * (k1 - k0)) / 1000;
    },
  };
}
