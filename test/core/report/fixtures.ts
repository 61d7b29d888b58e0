import { cp, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

/** Run folders made by the real CLI on the simulator (test/fixtures/runs/make-fixtures.sh). */
export const FIXTURES = ['closed', 'open', 'cancelled', 'sweep', 'attach'] as const;
export type FixtureName = (typeof FIXTURES)[number];

/** The secrets make-fixtures.sh passed to the closed-loop run (--api-key, --env HF_TOKEN=...). */
export const FIXTURE_SECRETS = ['sk-FIXTURESECRETKEY0123456789', 'hf_FIXTURESECRETTOKEN0123456789'];

const fixturesRoot = resolve(import.meta.dirname, '..', '..', 'fixtures', 'runs');

/** The committed fixture folder (read only). */
export function fixtureDir(name: FixtureName): string {
  return join(fixturesRoot, name);
}

/** A copy of a fixture in a temp folder, for tests that write or tamper. */
export async function fixtureCopy(name: FixtureName): Promise<string> {
  const dir = join(await mkdtemp(join(tmpdir(), 'sb-report-')), name);
  await cp(fixtureDir(name), dir, { recursive: true });
  return dir;
}
