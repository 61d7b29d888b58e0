import { defineConfig, externalizeDepsPlugin } from 'electron-vite';
import { svelte } from '@sveltejs/vite-plugin-svelte';

// main and preload are bundled for Node; the renderer is a Svelte 5 app.
export const config = defineConfig({
  main: { plugins: [externalizeDepsPlugin()], build: { rollupOptions: { input: { index: 'src/main/index.ts' } } } },
  preload: { plugins: [externalizeDepsPlugin()], build: { rollupOptions: { input: { index: 'src/preload/index.ts' } } } },
  renderer: { root: 'src/renderer', plugins: [svelte()], build: { rollupOptions: { input: 'src/renderer/index.html' } } },
});

// eslint-disable-next-line no-restricted-syntax -- electron-vite loads the default export
export default config;
