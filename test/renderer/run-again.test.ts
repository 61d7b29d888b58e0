import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BenchConfigSchema } from '../../src/shared/config.js';
import { engineHas } from '../../src/shared/engines.js';
import type { RunRecord } from '../../src/shared/run-record.js';
import { buildConfig } from '../../src/renderer/lib/run-form.js';
import { formFromRun } from '../../src/renderer/lib/run-again.js';
import { FIXTURES } from '../core/report/fixtures.js';

const record = (name: string): RunRecord =>
  JSON.parse(readFileSync(join(import.meta.dirname, '..', 'fixtures', 'runs', name, 'run.json'), 'utf8')) as RunRecord;

/** A config as a run would take it, without what --from never carries over (secrets, the output folder). */
function comparable(config: unknown): Record<string, unknown> {
  const c = BenchConfigSchema.parse(config) as unknown as Record<string, unknown>;
  const recorded = c.server as Record<string, unknown>;
  // Settings of other engines (a recorded default) are not the engine's: neither the form nor the run uses them.
  const server = Object.fromEntries(
    Object.entries(recorded).filter(([k]) => k === 'engine' || engineHas(recorded.engine as string, k)),
  );
  server.env = Object.fromEntries(
    Object.entries((recorded.env as Record<string, string>) ?? {}).filter(([, v]) => v !== '***'),
  );
  // An open-loop run goes by its rates: the concurrency list is not read.
  const { apiKey: _a, out: _o, concurrency, ...rest } = c;
  return { ...rest, ...(c.rate === undefined ? { concurrency } : {}), server };
}

describe('Run again: the form filled from a run', () => {
  it.each(FIXTURES)('the %s run: the form builds the recorded configuration again', (name) => {
    const r = record(name);
    const again = formFromRun(r.config);
    const built = buildConfig(again.form);
    expect(built.ok ? 'ok' : built.error).toBe('ok');
    if (!built.ok) return;
    expect(comparable(built.config)).toEqual(comparable(r.config));
  });

  it('leaves the secrets out and says which to give again', () => {
    const again = formFromRun(record('closed').config);
    expect(again.form.env.map((e) => e.name)).not.toContain('HF_TOKEN');
    expect(again.notices.join('\n')).toMatch(/HF_TOKEN/);
    expect(Object.values(again.form.values)).not.toContain('***');
  });
});
