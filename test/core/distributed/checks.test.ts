import { describe, expect, it } from 'vitest';
import type { WorkerLevelView } from '../../../src/shared/distributed.js';
import type { RoundResult } from '../../../src/shared/run-record.js';
import { clockCheck } from '../../../src/core/checks/clock.js';
import { workersClientCheck } from '../../../src/core/distributed/checks.js';

const view = (rank: number, extra: Partial<WorkerLevelView> = {}): WorkerLevelView => ({
  rank,
  host: `n${rank + 1}`,
  concurrency: 4,
  requests: 100,
  share: 1 / 3,
  offsetMs: rank === 0 ? 0 : 12.5,
  uncertaintyMs: rank === 0 ? 0 : 0.2,
  offsetChangeMs: rank === 0 ? null : 0.05,
  driftPpm: null,
  loopLagP99Ms: 3,
  scheduleLagP99Ms: null,
  client: 'pass',
  startLateMs: 0,
  ...extra,
});
const round = (windowMs: number): RoundResult => ({
  round: 0,
  outputTokPerSec: 1,
  totalTokPerSec: 1,
  reqPerSec: 1,
  windowMs,
  completed: 1,
  failed: 0,
  startMs: 0,
  endMs: windowMs,
});

describe('checks of a merged level', () => {
  it('passes the clock check when the offsets cannot move a round window by 1 %', () => {
    const c = clockCheck([view(0), view(1), view(2)], [round(10_000)]);
    expect(c).toMatchObject({ id: 'clock', status: 'pass', code: 'clocks-agree' });
    expect(c.facts?.windowErrorMs).toBeCloseTo(0.45, 9);
  });

  it('fails it when the clocks are too coarse for the rounds, and warns without an offset', () => {
    expect(clockCheck([view(0), view(1, { uncertaintyMs: 30 })], [round(1000)])).toMatchObject({
      status: 'fail',
      code: 'clocks-too-coarse',
    });
    expect(clockCheck([view(0), view(1, { uncertaintyMs: 10 })], [round(1000)])).toMatchObject({
      status: 'warn',
      code: 'clocks-coarse',
    });
    expect(clockCheck([view(0), view(1, { uncertaintyMs: null, offsetMs: null })], [round(1000)])).toMatchObject({
      status: 'warn',
      code: 'offset-missing',
    });
  });

  it('names a worker whose event loop lagged, with its share of the requests', () => {
    const c = workersClientCheck([view(0), view(1, { loopLagP99Ms: 140, share: 0.25 }), view(2)]);
    expect(c).toMatchObject({
      id: 'client',
      status: 'fail',
      code: 'worker-bottleneck',
      facts: { worstRank: 1, worstShare: 0.25 },
    });
    expect(workersClientCheck([view(0), view(1)])).toMatchObject({ status: 'pass', code: 'workers-kept-up' });
    // One that sent nothing at this level (c < N) is no client of it, whatever its idle loop did.
    expect(workersClientCheck([view(0), view(1, { requests: 0, loopLagP99Ms: 300 })]).status).toBe('pass');
  });
});
