import { describe, expect, it } from 'vitest';
import type { RequestRecord } from '../../src/shared/request-record.js';
import type { GpuSample } from '../../src/shared/telemetry.js';
import { timelineSpec } from '../../src/shared/timeline-spec.js';
import { windowFigures } from '../../src/shared/window-figures.js';

const req = (endMs: number, extra: Partial<RequestRecord> = {}): RequestRecord =>
  ({
    warmup: false,
    ok: true,
    sendMs: endMs - 1000,
    firstTokenMs: endMs - 900,
    endMs,
    nOut: 10,
    chunks: [
      [endMs - 900, 1],
      [endMs, 9],
    ],
    ...extra,
  }) as RequestRecord;
const gpu = (tMs: number, smClockMhz: number): GpuSample =>
  ({ tMs, gpu: 0, class: 'full-speed', smClockMhz, tempC: 60, powerW: 400 }) as GpuSample;

describe('the figures of a stretch of time chosen on the timeline', () => {
  const requests = [
    req(2000),
    req(3000, { firstTokenMs: 2500 }),
    req(4000, { ok: false, firstTokenMs: null }),
    req(4500, { warmup: true }),
    req(9000),
  ];
  const spec = timelineSpec({
    ttft: [],
    e2e: [],
    outputRate: [],
    gpu: [gpu(1000, 1980), gpu(2500, 1200), gpu(3500, 1500), gpu(8000, 900)],
    engine: [],
    client: [],
    levels: [],
  });

  it('counts the measured requests that ended in it, failures apart, warm-up left out', () => {
    const f = windowFigures({ requests, total: requests.length, truncated: false }, spec, 1.5, 5);
    expect([f.requests, f.failed]).toEqual([3, 1]);
    // TTFT 100 and 500 ms; TPOT (E2E - TTFT) / (10 - 1): 100 and 55.6 ms.
    expect(f.ttftMs).toEqual({ p50: 300, p95: 480, p99: 496 });
    expect(f.tpotMs?.p50).toBeCloseTo((100 + 500 / 9) / 2, 6);
  });

  it('takes output tok/s from the tokens that arrived in it, and each telemetry series its min and max', () => {
    const f = windowFigures({ requests, total: 5, truncated: false }, spec, 1.5, 5);
    // Chunks inside [1.5, 5] s: 9 of the request that ended at 2 s (its first came at 1.1 s), 1 + 9 of the one at
    // 3 s; the failed one and the warm-up are left out: 19 tokens.
    expect(f.outputTokPerSec).toBeCloseTo(19 / 3.5, 9);
    const clock = f.telemetry.find((t) => t.label === 'SM clock');
    expect(clock).toMatchObject({ unit: 'MHz', min: 1200, max: 1500 });
  });

  it('says when it holds only the first page of the requests', () => {
    const f = windowFigures({ requests: requests.slice(0, 2), total: 4000, truncated: true }, spec, 0, 10);
    expect(f).toMatchObject({ requests: 2, total: 4000, truncated: true });
    expect(windowFigures({ requests: [], total: 0, truncated: false }, spec, 0, 1).ttftMs).toBeNull();
  });
});
