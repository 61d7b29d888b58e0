import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { requestChart, requestPage } from '../../../src/core/run-folder/request-view.js';
import { dispatchCall } from '../../../src/core/ui-server/dispatch.js';
import { FakeService } from '../../fakes/fake-service.js';
import { REQUEST_CHART_COLUMNS_MAX, REQUESTS_PAGE_MAX } from '../../../src/shared/contract.js';
import type { RequestRecord } from '../../../src/shared/request-record.js';
import type { RunRecord } from '../../../src/shared/run-record.js';
import { requestLines, requestRecord } from './request-lines.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sb-request-view-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** n requests, one every 10 ms from t = 1 s, E2E 20 ms but for every 97th (a slow outlier). */
async function writeRequests(n: number): Promise<RequestRecord[]> {
  const records = Array.from({ length: n }, (_, i) =>
    requestRecord(i, i % 97 === 0 ? { endMs: 1000 + i * 10 + 900 } : {}),
  );
  records.push(requestRecord(n, { warmup: true, round: -1 }), requestRecord(n + 1, { ok: false, error: 'http-500' }));
  await writeFile(join(dir, 'requests.jsonl'), requestLines(records));
  return records;
}

const record = (fromMs: number, toMs: number): RunRecord =>
  ({ levels: [{ startMs: fromMs, endMs: toMs }] }) as unknown as RunRecord;

describe('the request chart the app opens a run with', () => {
  it('keeps at most two points per column and series, and every column lowest and highest value', async () => {
    const records = await writeRequests(20_000);
    const chart = await requestChart(dir, record(1000, 202_000), [], undefined, 100);
    expect(chart.requests).toBe(20_000);
    expect(chart.e2e.length).toBeLessThanOrEqual(200);
    expect(chart.ttft.length).toBeLessThanOrEqual(200);
    const e2e = chart.e2e.map(([, y]) => y);
    expect(Math.max(...e2e)).toBe(records[97]!.endMs! - records[97]!.sendMs);
    expect(Math.min(...e2e)).toBe(20);
    // Every column that holds an outlier keeps it.
    const outliers = chart.e2e.filter(([, y]) => y > 800).length;
    expect(outliers).toBeGreaterThanOrEqual(Math.min(100, Math.ceil(20_000 / 97)) - 1);
    const xs = chart.e2e.map(([x]) => x);
    expect([...xs].sort((a, b) => a - b)).toEqual(xs);
  });

  it("carries output tok/s over time from the measured requests' chunks, memory by the bin, not the request", async () => {
    await writeRequests(20_000);
    const chart = await requestChart(dir, record(1000, 202_000), [], undefined, 100);
    const rate = chart.outputRate ?? [];
    // 201 s of run: 2 s bins (about 150 of them); 2 tokens per measured request, warm-up and failures left out.
    const bin = rate.length > 1 ? rate[1]![0] - rate[0]![0] : 0;
    expect(bin).toBe(2);
    expect(rate.length).toBeLessThanOrEqual(110);
    expect(rate.reduce((sum, [, tokPerS]) => sum + tokPerS * bin, 0)).toBeCloseTo(40_000, 6);
  });

  it('a zoomed window gets only its own requests, at full resolution when they are few', async () => {
    await writeRequests(1000);
    const chart = await requestChart(dir, record(1000, 11_000), [], { fromS: 2, toS: 2.5 }, 1000);
    // Ends at 1,020 + 10 i ms: i = 98 ... 148 end inside [2 s, 2.5 s].
    expect(chart.requests).toBe(51);
    expect(chart.e2e).toHaveLength(51);
    expect(chart.e2e.every(([x]) => x >= 2 && x <= 2.5)).toBe(true);
  });

  it('full records go out a page at a time, for a window, saying when the page is full', async () => {
    await writeRequests(REQUESTS_PAGE_MAX + 500);
    const all = await requestPage(dir, []);
    expect(all.requests).toHaveLength(REQUESTS_PAGE_MAX);
    expect(all).toMatchObject({ total: REQUESTS_PAGE_MAX + 502, truncated: true, window: null });
    const window = await requestPage(dir, [], { fromS: 2, toS: 2.1 });
    expect(window.truncated).toBe(false);
    expect(window.requests.every((r) => r.sendMs <= 2100 && (r.endMs ?? r.sendMs) >= 2000)).toBe(true);
    expect(window.total).toBe(window.requests.length);
  });
});

describe('the door of the request calls', () => {
  it('refuses a window that ends before it starts, a non-finite one, and too many columns, before the service sees them', async () => {
    const service = new FakeService();
    const bad = [
      ['getRequests', ['run-1', { fromS: 5, toS: 2 }]],
      ['getRequests', ['run-1', { fromS: 0, toS: 1, extra: 1 }]],
      ['getRequestChart', ['run-1', { fromS: 0, toS: Number.POSITIVE_INFINITY }]],
      ['getRequestChart', ['run-1', undefined, REQUEST_CHART_COLUMNS_MAX + 1]],
    ] as const;
    for (const [method, args] of bad) expect((await dispatchCall(service, method, args)).ok).toBe(false);
    expect(service.calls).toEqual([]);
    expect((await dispatchCall(service, 'getRequestChart', ['run-1', { fromS: 1, toS: 2 }, 800])).ok).toBe(true);
    expect((await dispatchCall(service, 'getRequests', ['run-1'])).ok).toBe(true);
    expect(service.calls.map((c) => c.method)).toEqual(['getRequestChart', 'getRequests']);
  });
});
