import { defineConfig } from 'electron-vite';
import { svelte } from '@sveltejs/vite-plugin-svelte';

// main and the engine host are bundled for Node (ESM); preload is CommonJS with nothing external, because a
// sandboxed preload can neither be an ES module nor require packages; the renderer is a Svelte 5 app.
export const config = defineConfig({
  main: {
    build: {
      externalizeDeps: true,
      rollupOptions: { input: { index: 'src/main/index.ts', 'engine-host': 'src/main/engine-host.ts' } },
    },
  },
  preload: {
    build: {
      externalizeDeps: false,
      rollupOptions: {
        input: { index: 'src/preload/index.ts' },
        external: ['electron'],
        output: { format: 'cjs', entryFileNames: '[name].cjs' },
      },
    },
  },
  renderer: {
    root: 'src/renderer',
    plugins: [svelte()],
    build: { rollupOptions: { input: 'src/renderer/index.html' } },
  },
});

// eslint-disable-next-line no-restricted-syntax -- electron-vite loads the default export
export default config;
