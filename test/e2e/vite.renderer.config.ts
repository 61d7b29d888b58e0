import { svelte } from '@sveltejs/vite-plugin-svelte';
import { defineConfig } from 'vite';

// The renderer alone, as electron-vite builds it (same root and output), for the e2e tests' setup.
export const config = defineConfig({
  root: 'src/renderer',
  base: './',
  plugins: [svelte()],
  logLevel: 'warn',
  build: { outDir: '../../out/renderer', emptyOutDir: true },
});

// eslint-disable-next-line no-restricted-syntax -- vite loads the default export
export default config;
