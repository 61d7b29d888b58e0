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

/** What every project shares (maxWorkers stays the root's, so that --maxWorkers on the command line applies). */
const shared = {
  setupFiles: ['test/setup-env.ts'],
  testTimeout: 60_000,
  hookTimeout: 60_000,
  // The HTML report inlines uPlot's stylesheet as text (?raw): vitest would otherwise hand CSS over empty.
  css: { include: [/uPlot\.min\.css/] },
};

// Tests that spawn processes or run servers need room on a 2-core machine. test/integration runs after the rest (its
// own phase in npm test): its files wait on Slurm, clusters of processes and the simulator's clock more than they
// compute, two at a time, then the accuracy check against the simulator's truth log alone, with the CPUs to itself.
const TRUTH = 'test/integration/run-vs-truth.test.ts';

export const config = defineConfig({
  test: {
    maxWorkers: 2,
    // A line per finished file and the slowest files (progress-reporter.ts); failures in full, and the totals.
    reporters: ['agent', './test/progress-reporter.ts'],
    sequence: { sequencer: SpawnsFirstSequencer },
    projects: [
      { test: { ...shared, name: 'quick', include: quick.filter((f) => !mocks(f)), pool: 'threads', isolate: false } },
      { test: { ...shared, name: 'quick-mocks', include: quick.filter(mocks), pool: 'threads' } },
      {
        test: {
          ...shared,
          name: 'slow',
          include: ['test/**/*.test.ts'],
          exclude: [...quick, 'test/integration/**'],
          pool: 'forks',
        },
      },
      {
        test: {
          ...shared,
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          exclude: [TRUTH],
          pool: 'forks',
          sequence: { groupOrder: 1 },
        },
      },
      {
        test: {
          ...shared,
          name: 'integration-truth',
          include: [TRUTH],
          pool: 'forks',
          maxWorkers: 1,
          sequence: { groupOrder: 2 },
        },
      },
    ],
  },
});

// eslint-disable-next-line no-restricted-syntax -- vitest loads the default export
export default config;
