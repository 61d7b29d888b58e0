// `npm start` runs this first: electron-vite looks for the Electron binary without fetching it ("Electron uninstall"),
// and Electron 42+ has no install script, so a fresh install has none until electron's own install.js runs.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';

// An Electron of the user's own (electron-vite's ELECTRON_EXEC_PATH, electron's ELECTRON_OVERRIDE_DIST_PATH) needs no fetch.
if (process.env.ELECTRON_EXEC_PATH || process.env.ELECTRON_OVERRIDE_DIST_PATH) process.exit(0);

const require = createRequire(import.meta.url);
// install.js exits at once when the binary is there; its stderr is kept for the one line below.
const res = spawnSync(process.execPath, [require.resolve('electron/install.js')], {
  stdio: ['ignore', 'inherit', 'pipe'],
  encoding: 'utf8',
});
if (res.status !== 0) {
  const why =
    res.error?.message ??
    (res.stderr ?? '')
      .split('\n')
      .map((l) => l.trim())
      .find((l) => l && !l.startsWith('at ')) ??
    `exit ${res.status}`;
  console.error(
    `servebench: the Electron binary is missing and could not be fetched (${why}); ` +
      'run `npx install-electron` where the network allows it, or use `npx servebench ui` (the same app in a browser)',
  );
  process.exit(1);
}
