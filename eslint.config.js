// Lint with the layer boundaries of docs/architecture.md: dependencies point down.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';
import svelte from 'eslint-plugin-svelte';

const noElectron = {
  name: 'electron',
  message: 'core, shared and cli never import electron (docs/architecture.md, layers).',
};
// Engine modules are declarations that shared (the config schema) and the renderer (the form) read too: they are the
// one part of core those layers may import, and so themselves import nothing but zod, shared and each other.
const OTHER_CORE = '^(?!.*/core/servers/engines/).*/core/';

export default tseslint.config(
  { ignores: ['eslint.config.js', 'dist/', 'out/', 'node_modules/', 'runs/', 'coverage/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  ...svelte.configs.recommended,
  {
    // The components' `<script lang="ts">` is TypeScript: the same typescript-eslint rules read it.
    files: ['**/*.svelte', '**/*.svelte.ts'],
    languageOptions: { parserOptions: { parser: tseslint.parser, extraFileExtensions: ['.svelte'] } },
  },
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-restricted-syntax': ['error', { selector: 'ExportDefaultDeclaration', message: 'Use named exports.' }],
    },
  },
  {
    files: ['src/shared/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [noElectron],
          patterns: [
            { group: ['node:*', '**/cli/**', '**/main/**', '**/renderer/**'] },
            { regex: OTHER_CORE, message: 'shared reads only the engine modules of core.' },
          ],
        },
      ],
    },
  },
  {
    files: ['src/core/servers/engines/**'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: [noElectron],
          patterns: [
            {
              regex: '^(?!zod$|\\./|\\.\\./\\.\\./\\.\\./shared/)',
              allowTypeImports: true,
              message: 'an engine module is a declaration: zod, src/shared and its sibling modules only.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['src/core/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        { paths: [noElectron], patterns: ['**/cli/**', '**/main/**', '**/renderer/**', '**/preload/**'] },
      ],
    },
  },
  {
    files: ['src/cli/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        { paths: [noElectron], patterns: ['**/main/**', '**/renderer/**', '**/preload/**'] },
      ],
    },
  },
  {
    // The chart benchmark's page runs in a browser.
    files: ['bench/charts-harness/**'],
    languageOptions: { globals: { ...globals.browser } },
  },
  {
    files: ['src/renderer/**'],
    languageOptions: { globals: { ...globals.browser } },
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [noElectron],
          patterns: [
            { group: ['**/cli/**', '**/main/**', 'node:*'] },
            { regex: OTHER_CORE, message: 'the renderer reads only the engine modules of core.' },
          ],
        },
      ],
    },
  },
  {
    // No function over 100 lines (docs/architecture.md), in the components' scripts too.
    files: ['src/**/*.ts', 'src/**/*.svelte'],
    rules: {
      'max-lines-per-function': ['error', { max: 100, IIFEs: true }],
    },
  },
  {
    // Raw IPC only inside the two IPC wrappers.
    files: ['src/**'],
    ignores: ['src/main/ipc.ts', 'src/preload/index.ts'],
    rules: {
      'no-restricted-properties': [
        'error',
        { property: 'ipcRenderer', message: 'Use the typed contract wrappers.' },
        { property: 'ipcMain', message: 'Use the typed contract wrappers.' },
      ],
    },
  },
  {
    // The HTML report's inline script (inlined as text, run in the reader's browser with the inlined uPlot).
    files: ['src/core/report/html/timeline-draw.js'],
    languageOptions: { sourceType: 'script', globals: { ...globals.browser, uPlot: 'readonly' } },
  },
  {
    // Extension-less executables (the fake nvidia-smi) are plain scripts too.
    files: ['resources/fake-nvidia-smi'],
    languageOptions: { sourceType: 'script', globals: { ...globals.node } },
  },
  {
    files: ['**/*.js', '**/*.mjs', 'resources/**', 'test/fakes/**'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
