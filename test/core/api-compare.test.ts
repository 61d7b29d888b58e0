import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createServebenchService } from '../../src/core/api.js';
import type { ServebenchService } from '../../src/core/api.js';
import { dispatchCall } from '../../src/core/ui-server/dispatch.js';
import { FIXTURE_SECRETS, fixtureDir, type FixtureName } from './report/fixtures.js';

const A = '20261201T103727Z-closed';
const B = '20261201T105933Z-open';
const SWEEP = '20261201T103738Z-sweep';
const planted = { apiKey: 'plain-api-key-value-1234', env: 'supersecretenvvalue42', password: 'urlpassword77' };

let out: string;
let service: ServebenchService;
beforeEach(async () => {
  out = await mkdtemp(join(tmpdir(), 'sb-api-compare-'));
  const copies: Array<[string, FixtureName]> = [
    [A, 'closed'],
    [B, 'open'],
    [SWEEP, 'sweep'],
  ];
  for (const [id, name] of copies) await cp(fixtureDir(name), join(out, id), { recursive: true });
  // A run.json that still holds secrets (older or hand-edited): the comparison must not show them.
  const file = join(out, A, 'run.json');
  const record = JSON.parse(await readFile(file, 'utf8'));
  record.config.apiKey = planted.apiKey;
  record.config.server.env = { HF_TOKEN: planted.env };
  record.environment.engine.url = `http://user:${planted.password}@10.0.0.5:8000`;
  await writeFile(file, JSON.stringify(record));
  service = createServebenchService({ outDir: out, deps: {} as never });
});
afterEach(async () => {
  await rm(out, { recursive: true, force: true });
});

describe('compareRuns (the contract)', () => {
  it('compares two finished runs as one self-contained HTML page, with no script and no secret', async () => {
    const outcome = await dispatchCall(service, 'compareRuns', [[A, B], 'html']);
    expect(outcome.ok).toBe(true);
    const c = (outcome as { result: Awaited<ReturnType<ServebenchService['compareRuns']>> }).result;
    expect(c.format).toBe('html');
    expect(c.fileName).toBe(`compare-${A}-vs-${B}.html`);
    expect(c.mediaType).toBe('text/html');
    expect(c.series).toBe(2);
    expect(c.text).toMatch(/^<!doctype html>/i);
    expect(c.text).toContain('closed');
    expect(c.text).toContain('open');
    // Shown in a frame sandboxed without scripts, and fetching nothing.
    expect(c.text).not.toMatch(/<script|src="https?:|href="https?:/i);
    for (const secret of [...Object.values(planted), ...FIXTURE_SECRETS]) expect(c.text).not.toContain(secret);
  });

  it('renders Markdown too, and names a comparison of more than two runs after the first', async () => {
    const md = await service.compareRuns([A, B, SWEEP], 'md');
    expect(md.fileName).toBe(`compare-${A}-and-2-more.md`);
    expect(md.mediaType).toBe('text/markdown');
    expect(md.series).toBe(4);
    expect(md.text).toMatch(/^# /);
    for (const secret of [...Object.values(planted), ...FIXTURE_SECRETS]) expect(md.text).not.toContain(secret);
  });

  it('refuses in one line: fewer than two runs, the same run twice, an unknown run, a path, a bad format', async () => {
    const cases: Array<[unknown[], RegExp]> = [
      [[[A], 'html'], /./],
      [[[A, A], 'html'], /pick each run once/],
      [[[A, 'nope'], 'html'], /run nope not found in/],
      [[[A, '../etc'], 'html'], /invalid run id/],
      [[[A, B], 'pdf'], /./],
    ];
    for (const [args, message] of cases) {
      const outcome = await dispatchCall(service, 'compareRuns', args);
      expect(outcome.ok, JSON.stringify(args)).toBe(false);
      const error = (outcome as { error: string }).error;
      expect(error).toMatch(message);
      expect(error).not.toContain('\n');
    }
  });
});
