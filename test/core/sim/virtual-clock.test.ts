import { describe, expect, it } from 'vitest';
import { VirtualClock } from './virtual-clock.js';

describe('VirtualClock (the tests’ stand-in for the sim clock)', () => {
  it('runs timers in due order, ties in the order set, each at its due time; stands still otherwise', () => {
    const c = new VirtualClock();
    const seen: Array<[string, number]> = [];
    c.setTimer(() => seen.push(['b', c.nowMs()]), 20);
    c.setTimer(() => seen.push(['a', c.nowMs()]), 10);
    c.setTimer(() => seen.push(['a2', c.nowMs()]), 10);
    const gone = c.setTimer(() => seen.push(['cleared', c.nowMs()]), 15);
    c.clearTimer(gone);
    expect(c.nowMs()).toBe(0);
    expect(c.nextDueMs()).toBe(10);
    c.advance(15);
    expect(seen).toEqual([
      ['a', 10],
      ['a2', 10],
    ]);
    expect(c.nowMs()).toBe(15);
    expect(c.nowNs()).toBe(15_000_000n);
    expect(c.runNext()).toBe(true);
    expect(seen.at(-1)).toEqual(['b', 20]);
    expect(c.runNext()).toBe(false);
  });

  it('runs timers set by timers, and refuses to run forever', () => {
    const c = new VirtualClock();
    let n = 0;
    const tick = (): void => {
      n++;
      if (n < 5) c.setTimer(tick, 0);
    };
    c.setTimer(tick, 1);
    c.runAll();
    expect(n).toBe(5);
    expect(c.nowMs()).toBe(1);
    const forever = (): void => void c.setTimer(forever, 100);
    forever();
    expect(() => c.runAll(50)).toThrow(/still timers pending after 50/);
    expect(c.nowMs()).toBe(1 + 50 * 100);
  });
});
