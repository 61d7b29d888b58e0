import { describe, expect, it } from 'vitest';
import { REPLAY_POINTS_PER_LEVEL, ReplayLog } from '../../../src/core/ui-server/replay-log.js';
import type { ContractEvent } from '../../../src/shared/contract.js';

const done = (levelIndex: number, n: number): ContractEvent => ({
  type: 'request-done',
  levelIndex,
  round: 0,
  ok: true,
  ttftMs: 1,
  e2eMs: 2,
  endMs: n,
  done: n,
  total: 1_000_000,
  failed: 0,
});

describe('ReplayLog', () => {
  it('keeps a bounded, evenly thinned set of request points per level, and every other event', () => {
    const log = new ReplayLog();
    log.add({ type: 'run-started', runId: 'r', dir: '/d', simulated: true, totalLevels: 2 });
    for (let n = 1; n <= 100_000; n++) log.add(done(0, n));
    log.add({ type: 'phase', levelIndex: 1, phase: 'measure', round: 0 });
    for (let n = 1; n <= 10; n++) log.add(done(1, n));
    const points = log.all.filter((e) => e.type === 'request-done' && e.levelIndex === 0);
    expect(points.length).toBeLessThanOrEqual(REPLAY_POINTS_PER_LEVEL);
    expect(points.length).toBeGreaterThan(REPLAY_POINTS_PER_LEVEL / 2);
    // Evenly spaced: one stride between every two points kept.
    const gaps = new Set(
      points.slice(1).map((e, i) => (e as { done: number }).done - (points[i] as { done: number }).done),
    );
    expect(gaps.size).toBe(1);
    expect(log.all.filter((e) => e.type === 'request-done' && e.levelIndex === 1)).toHaveLength(10);
    expect(log.all.map((e) => e.type).filter((t) => t !== 'request-done')).toEqual(['run-started', 'phase']);
    log.add({ type: 'message', severity: 'info', text: 'x' });
    expect(log.all.at(-1)).toMatchObject({ type: 'message' });
  });
});
