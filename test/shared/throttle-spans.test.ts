import { describe, expect, it } from 'vitest';
import { recordedCeiling, throttleSpans } from '../../src/shared/throttle-spans.js';
import { THROTTLING } from '../../src/shared/throttle-spans.js';
import { slowdownBands } from '../../src/shared/timeline-spec.js';
import type { GpuSample } from '../../src/shared/telemetry.js';

const sample = (tMs: number, cls: GpuSample['class'], gpu = 0, extra: Partial<GpuSample> = {}): GpuSample =>
  ({ tMs, gpu, class: cls, smClockMhz: 1980, tempC: 60, powerW: 500, ...extra }) as GpuSample;
const samples = [
  sample(0, 'full-speed'),
  sample(1000, 'thermal'),
  sample(2000, 'thermal'),
  sample(3000, 'full-speed'),
  sample(4000, 'power-cap'),
  sample(5000, 'power-cap'),
  sample(6000, 'hw-slowdown'),
  sample(7000, 'idle'),
  sample(1500, 'power-cap', 1),
  sample(2500, 'full-speed', 1),
];

describe('throttle spans (one reckoning for the app and the HTML report)', () => {
  it('gives each kind its own span per GPU, up to the next sample in another state', () => {
    expect(throttleSpans(samples)).toEqual([
      { gpu: 0, kind: 'thermal', startMs: 1000, endMs: 3000 },
      { gpu: 1, kind: 'power-cap', startMs: 1500, endMs: 2500 },
      { gpu: 0, kind: 'power-cap', startMs: 4000, endMs: 6000 },
      { gpu: 0, kind: 'hw-slowdown', startMs: 6000, endMs: 7000 },
    ]);
    // One last throttled sample has no length yet.
    expect(throttleSpans([sample(0, 'full-speed'), sample(1000, 'thermal')])).toEqual([]);
  });

  it('the timeline spec (the app and the HTML report) shades each kind in its own colour, a power cap apart', () => {
    const bands = slowdownBands(samples);
    expect(bands.map((b) => [b.from, b.to, b.kind])).toEqual([
      [1, 3, 'thermal'],
      [1.5, 2.5, 'power-cap'],
      [4, 6, 'power-cap'],
      [6, 7, 'hw-slowdown'],
    ]);
    expect(new Set(bands.map((b) => b.fill)).size).toBe(3);
    expect(THROTTLING['power-cap']).toBe(false);
  });

  it("reads the GPU's max SM clock and power limit where the telemetry records them", () => {
    const rec = [sample(0, 'idle', 0, { maxSmClockMhz: 1980, powerLimitW: 700 }), sample(1, 'idle', 1)];
    expect(recordedCeiling(rec, 'maxSmClockMhz')).toBe(1980);
    expect(recordedCeiling(rec, 'powerLimitW')).toBe(700);
    expect(recordedCeiling([sample(0, 'idle', 0, { maxSmClockMhz: null })], 'maxSmClockMhz')).toBeNull();
  });
});
