import { defineConfig } from 'vitest/config';

// Tests that spawn processes or run servers need room on a 2-core machine. test/integration runs on its own
// afterwards (npm run test:integration), so that its accuracy check against the truth log has the CPUs to itself.
export const config = defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    setupFiles: ['test/setup-env.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 2,
  },
});

// eslint-disable-next-line no-restricted-syntax -- vitest loads the default export
export default config;
