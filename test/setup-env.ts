import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// Tests never touch the user's own servebench folder (settings, the run-seal key): each test file gets a
// user-data folder of its own, which the CLI children it spawns inherit.
if (!process.env.SERVEBENCH_CONFIG_DIR) {
  const dir = mkdtempSync(join(tmpdir(), 'sb-config-'));
  process.env.SERVEBENCH_CONFIG_DIR = dir;
  process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
}
