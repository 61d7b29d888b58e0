import { describe, expect, it } from 'vitest';
import { groupByStatus, STATUSES_WORST_FIRST, worstStatus } from '../../src/shared/check-status.js';

describe('check statuses', () => {
  it('takes the worst: a fail outweighs a warn, a warn a pass; none is a pass', () => {
    expect(worstStatus(['pass', 'warn', 'pass'])).toBe('warn');
    expect(worstStatus(['warn', 'fail', 'pass'])).toBe('fail');
    expect(worstStatus([])).toBe('pass');
    expect(STATUSES_WORST_FIRST).toEqual(['fail', 'warn', 'pass']);
  });

  it('groups by status, keeping warn and fail apart and the order within each', () => {
    const checks = [
      { id: 'a', status: 'warn' as const },
      { id: 'b', status: 'fail' as const },
      { id: 'c', status: 'warn' as const },
    ];
    const g = groupByStatus(checks);
    expect(g.fail.map((c) => c.id)).toEqual(['b']);
    expect(g.warn.map((c) => c.id)).toEqual(['a', 'c']);
    expect(g.pass).toEqual([]);
  });
});
