import { describe, expect, it } from 'vitest';
import { classifyThrottle, describeThrottleMask, findEpisodes } from '../../../src/core/telemetry/throttle.js';
import { gpuSample } from './helpers.js';

describe('throttle classifier (the GPU throttle-reason bits)', () => {
  it('classifies each reason', () => {
    expect(classifyThrottle(null)).toBe('unknown');
    expect(classifyThrottle(0x0)).toBe('full-speed');
    expect(classifyThrottle(0x1)).toBe('idle');
    expect(classifyThrottle(0x4)).toBe('power-cap');
    expect(classifyThrottle(0x20)).toBe('thermal');
    expect(classifyThrottle(0x40)).toBe('thermal');
    expect(classifyThrottle(0x8)).toBe('hw-slowdown');
    expect(classifyThrottle(0x80)).toBe('hw-slowdown');
    expect(classifyThrottle(0x48)).toBe('thermal');
    expect(classifyThrottle(0x4 | 0x80)).toBe('hw-slowdown');
  });

  it('does not call app clocks, sync boost or a low clock without a bit throttling', () => {
    expect(classifyThrottle(0x2)).toBe('full-speed');
    expect(classifyThrottle(0x10)).toBe('full-speed');
    expect(classifyThrottle(0x100)).toBe('full-speed');
  });

  it('names the bits', () => {
    expect(describeThrottleMask(0x24)).toBe('SW power cap, SW thermal slowdown');
    expect(describeThrottleMask(0)).toBe('none');
  });

  it('finds contiguous episodes per GPU with their lowest clock ratio', () => {
    const s = (tMs: number, gpu: number, cls: 'thermal' | 'full-speed' | 'power-cap', clock = 1980) =>
      gpuSample({ tMs, gpu, class: cls, smClockMhz: clock });
    const episodes = findEpisodes([
      s(0, 0, 'full-speed'),
      s(500, 0, 'thermal', 1600),
      s(1000, 0, 'thermal', 1400),
      s(1500, 0, 'full-speed'),
      s(500, 1, 'power-cap', 1900),
      s(1000, 1, 'power-cap', 1800),
      s(1500, 1, 'thermal', 990),
    ]);
    expect(episodes).toHaveLength(3);
    expect(episodes[0]).toMatchObject({ gpu: 0, kind: 'thermal', startMs: 500, endMs: 1000 });
    expect(episodes[0]?.lowestClockRatio).toBeCloseTo(1400 / 1980);
    expect(episodes[1]).toMatchObject({ gpu: 1, kind: 'power-cap', startMs: 500, endMs: 1000 });
    expect(episodes[2]).toMatchObject({ gpu: 1, kind: 'thermal', startMs: 1500, endMs: 1500, lowestClockRatio: 0.5 });
  });
});
