import { describe, expect, it } from 'vitest';
import { formatTelemetryLines } from '../../../src/core/telemetry/telemetry-lines.js';
import { gpuSample } from './helpers.js';

describe('telemetry.jsonl lines', () => {
  it('writes one JSON object per sample with its kind, in time order', () => {
    const text = formatTelemetryLines({
      gpu: [gpuSample({ tMs: 10 }), gpuSample({ tMs: 30, gpu: 1 })],
      engine: [
        {
          tMs: 20,
          running: 1,
          waiting: 0,
          kvUsage: 0.1,
          preemptionsTotal: 0,
          prefixCacheHitsTotal: 0,
          generationTokensTotal: 5,
        },
      ],
      client: [{ tMs: 10, loopLagMs: 0.5, cpuPct: 12 }],
    });
    const lines = text
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as { kind: string; tMs: number });
    expect(lines.map((l) => [l.kind, l.tMs])).toEqual([
      ['gpu', 10],
      ['client', 10],
      ['engine', 20],
      ['gpu', 30],
    ]);
    expect(text.endsWith('\n')).toBe(true);
    expect(formatTelemetryLines({})).toBe('');
  });
});
