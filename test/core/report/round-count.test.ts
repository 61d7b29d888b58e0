import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { headlineFacts } from '../../../src/core/report/facts.js';
import type { RunRecord } from '../../../src/shared/run-record.js';
import { countOf } from '../../../src/shared/plural.js';

const closed = JSON.parse(
  readFileSync(join(import.meta.dirname, '..', '..', 'fixtures', 'runs', 'closed', 'run.json'), 'utf8'),
) as RunRecord;

describe('counts read right at one', () => {
  it('"1 round", "2 rounds"', () => {
    expect(countOf(1, 'round')).toBe('1 round');
    expect(countOf(2, 'round')).toBe('2 rounds');
  });

  it("the report's load line says 1 round per level, not 1 rounds", () => {
    const record = { ...closed, config: { ...closed.config, rounds: 1 } };
    const load = headlineFacts(record).find((f) => f.label === 'Load')?.value ?? '';
    expect(load).toMatch(/; 1 round per level$/);
  });
});
