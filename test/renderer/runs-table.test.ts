import { describe, expect, it } from 'vitest';
import { runSummary } from './run-summary.js';
import type { RunSummary } from '../../src/shared/contract.js';
import { nextSort, runVerdict, sortRuns } from '../../src/renderer/lib/runs-table.js';
import { runHeadline } from '../../src/shared/run-headline.js';
import type { RunRecord } from '../../src/shared/run-record.js';

const run = runSummary;
const head = (verdict: 'pass' | 'warn' | 'fail', peak: number | null, ttft: number | null) => ({
  verdict,
  failed: verdict === 'fail' ? ['throttling'] : [],
  warned: verdict === 'warn' ? ['sample-size'] : [],
  peakOutputTokPerSec: peak,
  firstTtftP95Ms: ttft,
});

describe('the runs table', () => {
  const runs = [
    run('slow', { headline: head('pass', 100, 30), startedAt: '2026-12-01T09:00:00Z', model: 'b' }),
    run('fast', { headline: head('fail', 900, 10), startedAt: '2026-12-01T11:00:00Z', model: 'a' }),
    run('none', { headline: head('warn', null, null), startedAt: '2026-12-01T10:00:00Z' }),
  ];
  const ids = (rs: RunSummary[]): string[] => rs.map((r) => r.id);

  it('sorts by each column, a missing value last in both directions', () => {
    expect(ids(sortRuns(runs, 'peak', 'desc'))).toEqual(['fast', 'slow', 'none']);
    expect(ids(sortRuns(runs, 'peak', 'asc'))).toEqual(['slow', 'fast', 'none']);
    expect(ids(sortRuns(runs, 'ttft', 'asc'))).toEqual(['fast', 'slow', 'none']);
    expect(ids(sortRuns(runs, 'date', 'desc'))).toEqual(['fast', 'none', 'slow']);
    expect(ids(sortRuns(runs, 'model', 'asc'))).toEqual(['fast', 'slow', 'none']);
    expect(ids(sortRuns(runs, 'verdict', 'desc'))).toEqual(['fast', 'none', 'slow']);
  });

  it('flips the sorted column; a new column starts its natural way', () => {
    expect(nextSort({ key: 'peak', dir: 'desc' }, 'peak')).toEqual({ key: 'peak', dir: 'asc' });
    expect(nextSort({ key: 'peak', dir: 'desc' }, 'label')).toEqual({ key: 'label', dir: 'asc' });
    expect(nextSort({ key: 'label', dir: 'asc' }, 'date')).toEqual({ key: 'date', dir: 'desc' });
  });

  it("gives a completed run its checks' verdict, other runs their status", () => {
    expect(runVerdict(runs[1]!)).toBe('fail');
    expect(runVerdict(runs[0]!)).toBe('pass');
    expect(runVerdict(run('c', { status: 'cancelled', headline: head('pass', 1, 1) }))).toBe('cancelled');
    expect(runVerdict(run('u', { unreadable: 'is damaged' }))).toBe('unreadable');
  });

  it("takes a record's headline: worst check, peak output tok/s, first level's TTFT p95", () => {
    const level = (rate: number | null, p95: number) =>
      ({ outputTokPerSec: rate, ttftMs: { p95 } }) as unknown as RunRecord['levels'][number];
    const h = runHeadline({
      checks: [
        { id: 'sample-size', status: 'warn', detail: '' },
        { id: 'throttling', status: 'fail', detail: '' },
        { id: 'errors', status: 'pass', detail: '' },
      ],
      levels: [level(120, 14), level(null, 99), level(340, 31)],
    });
    expect(h).toEqual({
      verdict: 'fail',
      failed: ['throttling'],
      warned: ['sample-size'],
      peakOutputTokPerSec: 340,
      firstTtftP95Ms: 14,
    });
    expect(runHeadline({ checks: [], levels: [] })).toMatchObject({ verdict: 'pass', peakOutputTokPerSec: null });
  });
});
