import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

const script = new URL('../../scripts/ensure-electron.mjs', import.meta.url).pathname;
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** This process's environment without the variables that name an Electron of the user's own. */
function withoutElectronEnv(): NodeJS.ProcessEnv {
  const { ELECTRON_EXEC_PATH: _exec, ELECTRON_OVERRIDE_DIST_PATH: _dist, ...rest } = process.env;
  return rest;
}

/** The script beside a stand-in electron package whose install.js is `body`. */
function withElectron(body: string, env: Record<string, string> = {}): { status: number | null; stderr: string } {
  const dir = mkdtempSync(join(tmpdir(), 'sb-ensure-electron-'));
  dirs.push(dir);
  mkdirSync(join(dir, 'scripts'));
  mkdirSync(join(dir, 'node_modules', 'electron'), { recursive: true });
  copyFileSync(script, join(dir, 'scripts', 'ensure-electron.mjs'));
  writeFileSync(join(dir, 'node_modules', 'electron', 'package.json'), '{"name":"electron","main":"index.js"}');
  writeFileSync(join(dir, 'node_modules', 'electron', 'install.js'), body);
  const res = spawnSync(process.execPath, [join(dir, 'scripts', 'ensure-electron.mjs')], {
    encoding: 'utf8',
    env: { ...withoutElectronEnv(), ...env },
  });
  return { status: res.status, stderr: res.stderr };
}

describe('npm start: the Electron binary fetched before electron-vite looks for it', () => {
  it("runs electron's install.js (which fetches a missing binary) and exits 0 when it succeeds", () => {
    const res = withElectron("require('fs').writeFileSync(__dirname + '/path.txt', 'electron');");
    expect(res).toEqual({ status: 0, stderr: '' });
    expect(existsSync(join(dirs[0]!, 'node_modules', 'electron', 'path.txt'))).toBe(true);
  });

  it('a fetch that fails: one line naming the fixes, exit 1, no stack trace', () => {
    const res = withElectron("console.error('TypeError: fetch failed\\n    at node:internal/x'); process.exit(1);");
    expect(res.status).toBe(1);
    const lines = res.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^servebench: the Electron binary is missing and could not be fetched \(TypeError: fetch failed\);/,
    );
    expect(lines[0]).toMatch(/npx install-electron.*npx servebench ui/);
  });

  it("an Electron of the user's own (ELECTRON_EXEC_PATH, ELECTRON_OVERRIDE_DIST_PATH): no fetch, exit 0", () => {
    for (const name of ['ELECTRON_EXEC_PATH', 'ELECTRON_OVERRIDE_DIST_PATH']) {
      const res = withElectron("console.error('fetch failed'); process.exit(1);", { [name]: '/opt/electron/electron' });
      expect(res, name).toEqual({ status: 0, stderr: '' });
    }
  });
});
