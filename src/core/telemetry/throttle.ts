import type { ThrottleClass } from '../../shared/run-record.js';
import type { GpuSample, ThrottleEpisode } from '../../shared/telemetry.js';

/** Bits of nvidia-smi's clocks_throttle_reasons.active / clocks_event_reasons.active (nvml.h). */
const THROTTLE_BITS = {
  idle: 0x1,
  appClocks: 0x2,
  swPowerCap: 0x4,
  hwSlowdown: 0x8,
  syncBoost: 0x10,
  swThermal: 0x20,
  hwThermal: 0x40,
  hwPowerBrake: 0x80,
} as const;

/** Thermal slowdown: SW thermal | HW thermal. */
const THERMAL_MASK = 0x60;
/** Hardware slowdown / power brake: HW slowdown | HW power brake. */
const HW_SLOWDOWN_MASK = 0x88;

/**
 * Classifies one sample's active mask. A clock below max with no bit set is not throttling
 * (boost simply is not needed); only the driver's reasons count. No mask means unknown.
 */
export function classifyThrottle(mask: number | null): ThrottleClass {
  if (mask === null) return 'unknown';
  if (mask & THERMAL_MASK) return 'thermal';
  if (mask & HW_SLOWDOWN_MASK) return 'hw-slowdown';
  if (mask & THROTTLE_BITS.swPowerCap) return 'power-cap';
  if (mask & THROTTLE_BITS.idle) return 'idle';
  return 'full-speed';
}

const BIT_NAMES: Array<[number, string]> = [
  [THROTTLE_BITS.idle, 'idle'],
  [THROTTLE_BITS.appClocks, 'applications clocks'],
  [THROTTLE_BITS.swPowerCap, 'SW power cap'],
  [THROTTLE_BITS.hwSlowdown, 'HW slowdown'],
  [THROTTLE_BITS.syncBoost, 'sync boost'],
  [THROTTLE_BITS.swThermal, 'SW thermal slowdown'],
  [THROTTLE_BITS.hwThermal, 'HW thermal slowdown'],
  [THROTTLE_BITS.hwPowerBrake, 'HW power brake'],
];

/** Names of the bits set in a mask, for people ("SW power cap, HW slowdown"). */
export function describeThrottleMask(mask: number | null): string {
  if (mask === null) return 'unknown';
  const names = BIT_NAMES.filter(([bit]) => mask & bit).map(([, name]) => name);
  return names.length ? names.join(', ') : 'none';
}

/** SM clock as a fraction of its maximum, or null when either is unknown. */
export function clockRatio(sample: Pick<GpuSample, 'smClockMhz' | 'maxSmClockMhz'>): number | null {
  if (sample.smClockMhz === null || sample.maxSmClockMhz === null || sample.maxSmClockMhz <= 0) return null;
  return sample.smClockMhz / sample.maxSmClockMhz;
}

const EPISODE_KINDS = new Set<ThrottleClass>(['thermal', 'hw-slowdown', 'power-cap']);

/** Contiguous thermal / hw-slowdown / power-cap stretches per GPU, with start, end and lowest clock ratio. */
export function findEpisodes(samples: readonly GpuSample[]): ThrottleEpisode[] {
  const byGpu = new Map<number, GpuSample[]>();
  for (const s of samples) {
    const list = byGpu.get(s.gpu) ?? [];
    list.push(s);
    byGpu.set(s.gpu, list);
  }
  const episodes: ThrottleEpisode[] = [];
  for (const [gpu, list] of byGpu) {
    list.sort((a, b) => a.tMs - b.tMs);
    let open: ThrottleEpisode | null = null;
    for (const s of list) {
      const kind = EPISODE_KINDS.has(s.class) ? (s.class as ThrottleEpisode['kind']) : null;
      if (open && open.kind !== kind) {
        episodes.push(open);
        open = null;
      }
      if (!kind) continue;
      const ratio = clockRatio(s);
      if (!open) {
        open = { gpu, kind, startMs: s.tMs, endMs: s.tMs, lowestClockRatio: ratio };
      } else {
        open.endMs = s.tMs;
        if (ratio !== null && (open.lowestClockRatio === null || ratio < open.lowestClockRatio)) {
          open.lowestClockRatio = ratio;
        }
      }
    }
    if (open) episodes.push(open);
  }
  return episodes.sort((a, b) => a.startMs - b.startMs || a.gpu - b.gpu);
}
