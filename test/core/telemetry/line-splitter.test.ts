import { describe, expect, it } from 'vitest';
import { createLineSplitter } from '../../../src/core/telemetry/exec.js';

describe('createLineSplitter', () => {
  it('joins lines across chunks, strips CR, and drops the rest of a line past the cap (saying so)', () => {
    const lines: string[] = [];
    let overlong = 0;
    const split = createLineSplitter(
      (l) => lines.push(l),
      8,
      () => overlong++,
    );
    split('0, 61\r\n0, 6');
    split('2\n');
    split('x'.repeat(5));
    split('x'.repeat(50));
    split('yyy\n0, 63\n');
    expect(lines).toEqual(['0, 61', '0, 62', '0, 63']);
    expect(overlong).toBe(1);
  });
});
