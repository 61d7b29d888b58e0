import { readdirSync, readFileSync } from 'node:fs';
import { defineConfig } from 'vitest/config';
import { isSlowFile, SpawnsFirstSequencer } from './test/spawns-first-sequencer.js';

/**
 * The unit tests of src/core and src/shared that start no process, browser or real-time server (npm run test:quick).
 * They share their workers' module cache, which spares each file the import of the modules it tests, all but those
 * that mock a module (vi.mock): a mocked module would leak into the files after them.
 */
const testFiles = (dir: string): string[] =>
  readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.test.ts'))
    .map((f) => `${dir}/${f}`);
const quick = [...testFiles('test/core'), ...testFiles('test/shared')].filter((f) => !isSlowFile(f));
const mocks = (f: string): boolean => /\bvi\.(do)?[mM]ock\(/.test(readFileSync(f, 'utf8'));

// Tests that spawn processes or run servers need room on a 2-core machine. test/integration runs on its own
// afterwards (npm run test:integration), so that its accuracy check against the truth log has the CPUs to itself.
export const config = defineConfig({
  test: {
    setupFiles: ['test/setup-env.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    maxWorkers: 2,
    // A line per finished file and the slowest files (progress-reporter.ts); failures in full, and the totals.
    reporters: ['agent', './test/progress-reporter.ts'],
    sequence: { sequencer: SpawnsFirstSequencer },
    projects: [
      {
        extends: true,
        test: { name: 'quick', include: quick.filter((f) => !mocks(f)), pool: 'threads', isolate: false },
      },
      { extends: true, test: { name: 'quick-mocks', include: quick.filter(mocks), pool: 'threads' } },
      {
        extends: true,
        test: {
          name: 'slow',
          include: ['test/**/*.test.ts'],
          exclude: [...quick, 'test/integration/**'],
          pool: 'forks',
        },
      },
      { extends: true, test: { name: 'integration', include: ['test/integration/**/*.test.ts'], pool: 'forks' } },
    ],
  },
});

// eslint-disable-next-line no-restricted-syntax -- vitest loads the default export
export default config;
