// Bundles the Node entry points (CLI, load worker, benches) so `npx servebench` works right after `npm ci`.
import { build } from 'esbuild';
import { rawText } from './raw-text-plugin.mjs';
import { existsSync } from 'node:fs';

const entries = {
  cli: 'src/cli/main.ts',
  'load-worker': 'src/core/load/worker-entry.ts',
  'bench-client': 'bench/bench-client.ts',
  'bench-sim': 'bench/bench-sim.ts',
  'bench-report': 'bench/bench-report.ts',
  'bench-compare': 'bench/bench-compare.ts',
  'bench-charts': 'bench/bench-charts.ts',
  'bench-viewers': 'bench/bench-viewers.ts',
  'bench-merge': 'bench/bench-merge.ts',
  'bench-memory': 'bench/bench-memory.ts',
  'bench-precision': 'bench/bench-precision.ts',
};
const entryPoints = Object.fromEntries(Object.entries(entries).filter(([, file]) => existsSync(file)));

await build({
  entryPoints,
  outdir: 'dist',
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'esm',
  packages: 'external',
  sourcemap: true,
  logLevel: 'warning',
  plugins: [rawText],
  banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
});
