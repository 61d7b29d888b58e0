import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = new URL('../..', import.meta.url).pathname;
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

/** The repository's files as a clone of this working tree has them (tracked and not-ignored untracked ones). */
function copyWorkingTree(to: string): void {
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: root,
    encoding: 'utf8',
  })
    .split('\0')
    .filter((f) => f && f !== 'node_modules' && existsSync(join(root, f)));
  for (const f of files) {
    mkdirSync(dirname(join(to, f)), { recursive: true });
    copyFileSync(join(root, f), join(to, f));
  }
}

// `npm install` in a fresh clone installs node_modules and then runs `prepare`; the packages are shared here
// (installing them needs the network), so the copy links this checkout's node_modules and runs what npm runs next.
describe('a fresh clone after the README install command', () => {
  let dir = '';
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'servebench-clone-'));
    copyWorkingTree(dir);
    symlinkSync(realpathSync(join(root, 'node_modules')), join(dir, 'node_modules'), 'dir');
    expect(existsSync(join(dir, 'dist', 'cli.js'))).toBe(false);
    expect(existsSync(join(dir, 'out', 'renderer', 'index.html'))).toBe(false);
    const res = spawnSync(npm, ['run', 'prepare'], { cwd: dir, encoding: 'utf8', timeout: 600_000 });
    expect(res.status, `${res.stdout}\n${res.stderr}`).toBe(0);
  }, 660_000);
  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('answers `servebench run --help`', () => {
    const out = execFileSync(process.execPath, [join(dir, 'bin', 'servebench.js'), 'run', '--help'], {
      cwd: dir,
      encoding: 'utf8',
    });
    expect(out).toMatch(/Usage: servebench run/);
  });

  it('serves the app with `servebench ui`, no build step in between', async () => {
    const child = spawn(
      process.execPath,
      [join(dir, 'bin', 'servebench.js'), 'ui', '--port', '0', '--out', join(dir, 'runs')],
      { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      const url = await new Promise<string>((resolve, reject) => {
        createInterface({ input: child.stdout }).on('line', (line) => {
          const m = /open (http:\/\/\S+)/.exec(line);
          if (m?.[1]) resolve(m[1]);
        });
        void exited.then((code) => reject(new Error(`servebench ui exited (${code}): ${stderr}`)));
      });
      const res = await fetch(url);
      expect(res.status).toBe(200);
      expect(await res.text()).toMatch(/<script[^>]+src="\.\/assets\/[^"]+\.js"/);
    } finally {
      child.kill('SIGINT');
      await exited;
    }
  });
});
