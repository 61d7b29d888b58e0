import { describe, expect, it } from 'vitest';
import { planLine } from '../../src/renderer/lib/plan-line.js';
import type { RunPlan } from '../../src/shared/run-estimate.js';

const plan = (over: Partial<RunPlan> = {}): RunPlan => ({
  levels: 3,
  serverConfigs: 1,
  rounds: 3,
  requests: 1200,
  warmupRequests: 72,
  seconds: 150,
  basis: 'recorded',
  atMost: false,
  capacity: false,
  excludes: ['launch', 'calibration'],
  ...over,
});

describe('planLine', () => {
  it('says what is sent and how long, at whose pace', () => {
    const line = planLine(plan(), 'demo');
    expect(line.sends).toBe('3 levels × 3 rounds: 1,200 requests, 72 of them warm-up');
    expect(line.time).toContain('about 3 min');
    expect(line.time).toContain("'demo'");
  });

  it('gives no time where no pace is known, and none for a capacity search', () => {
    expect(planLine(plan({ seconds: null, basis: 'none' })).time).not.toMatch(/about/);
    expect(planLine(plan({ capacity: true, seconds: null })).sends).toMatch(/^up to 3 levels/);
  });

  it('names the cool-down among what the time leaves out', () => {
    expect(planLine(plan({ excludes: ['launch', 'calibration', 'cool-down'] })).leavesOut).toContain('cool-down');
    expect(planLine(plan({ atMost: true })).time).toMatch(/^Time: at most/);
  });
});
