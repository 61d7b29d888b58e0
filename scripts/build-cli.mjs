// Bundles the Node entry points (CLI, load worker, benches) so `npx servebench` works right after `npm ci`.
import { build } from 'esbuild';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, resolve } from 'node:path';

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
// `file?raw` imports a file's text at build time, as vite does (the HTML report inlines uPlot this way).
const require = createRequire(import.meta.url);
const rawText = {
  name: 'raw-text',
  setup(b) {
    b.onResolve({ filter: /\?raw$/ }, (args) => {
      const spec = args.path.slice(0, -'?raw'.length);
      const path = spec.startsWith('.') ? resolve(dirname(args.importer), spec) : require.resolve(spec);
      return { path, namespace: 'raw-text' };
    });
    b.onLoad({ filter: /.*/, namespace: 'raw-text' }, (args) => ({
      contents: readFileSync(args.path, 'utf8'),
      loader: 'text',
    }));
  },
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
