import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, resolve } from 'node:path';

// `file?raw` imports a file's text at build time, as vite does (the HTML report inlines uPlot this way).
const require = createRequire(import.meta.url);
/** The esbuild plugin for `?raw` imports (the CLI build and the tests that bundle the CLI themselves). */
export const rawText = {
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
