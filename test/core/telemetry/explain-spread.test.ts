import { describe, expect, it } from 'vitest';
import { explainSpread } from '../../../src/core/telemetry/explain-spread.js';
import { gpuSample } from './helpers.js';

const rounds = [
  { round: 1, startMs: 0, endMs: 1000, outputTokPerSec: 2000 },
  { round: 2, startMs: 1000, endMs: 2000, outputTokPerSec: 1400 },
  { round: 3, startMs: 2000, endMs: 3000, outputTokPerSec: 1950 },
];

describe('explainSpread', () => {
  it('says nothing when the spread is within 15 %', () => {
    expect(explainSpread({ roundCv: 0.1, rounds, gpuSamples: [], engineSamples: [], clientSamples: [] })).toBeNull();
    expect(explainSpread({ roundCv: null, rounds, gpuSamples: [], engineSamples: [], clientSamples: [] })).toBeNull();
  });

  it('names what coincided per round: throttling, preemptions, client saturation, other processes', () => {
    const text = explainSpread({
      roundCv: 0.18,
      rounds,
      gpuSamples: [
        gpuSample({ tMs: 500 }),
        gpuSample({ tMs: 1200, class: 'thermal', smClockMhz: 990 }),
        gpuSample({ tMs: 1700 }),
        gpuSample({ tMs: 2500 }),
      ],
      engineSamples: [
        {
          tMs: 1900,
          running: 8,
          waiting: 0,
          kvUsage: 1,
          preemptionsTotal: 0,
          prefixCacheHitsTotal: null,
          generationTokensTotal: null,
        },
        {
          tMs: 2900,
          running: 8,
          waiting: 0,
          kvUsage: 1,
          preemptionsTotal: 4,
          prefixCacheHitsTotal: null,
          generationTokensTotal: null,
        },
      ],
      clientSamples: [{ tMs: 800, loopLagMs: 180, cpuPct: 99 }],
      processSnapshots: [],
    });
    expect(text).toBe(
      'Round spread 18 %: round 1 (2000 tok/s): client saturated (event-loop lag up to 180 ms, CPU 99 %); ' +
        'round 2 (1400 tok/s): thermal slowdown 50 % of the round (clock down to 50 % of max); round 3 (1950 tok/s): 4 preemptions.',
    );
  });

  it('says "nothing found" when nothing coincided, and notes missing GPU telemetry', () => {
    const text = explainSpread({
      roundCv: 0.3,
      rounds,
      gpuSamples: [],
      engineSamples: [],
      clientSamples: [],
      gpuAvailable: false,
    });
    expect(text).toMatch(/^Round spread 30 %: nothing found/);
    expect(text).toMatch(/GPU telemetry was unavailable/);
  });
});
