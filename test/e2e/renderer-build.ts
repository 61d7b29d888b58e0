import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** Newest modification time under a folder (files only), 0 when it is missing. */
function newest(dir: string): number {
  if (!existsSync(dir)) return 0;
  let t = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    t = Math.max(t, entry.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return t;
}

/**
 * The e2e tests drive the built renderer (out/renderer) and the simulator runs from dist/cli.js:
 * build either when it is missing or older than its sources (a few seconds each).
 */
export function ensureBuilt(root: string): void {
  const index = join(root, 'out', 'renderer', 'index.html');
  const built = existsSync(index) ? statSync(index).mtimeMs : 0;
  // The renderer reads src/shared and the engine modules' declarations (their settings make its form).
  const sources = [
    ['src', 'renderer'],
    ['src', 'shared'],
    ['src', 'core', 'servers', 'engines'],
  ];
  if (built < Math.max(...sources.map((p) => newest(join(root, ...p))))) {
    // e2e files run in parallel and may each rebuild: build aside, then swap, so no page ever loads a half-emptied folder.
    const target = join(root, 'out', 'renderer');
    const fresh = `${target}.build-${process.pid}`;
    execFileSync(
      process.execPath,
      [
        join(root, 'node_modules', 'vite', 'bin', 'vite.js'),
        'build',
        '--config',
        'test/e2e/vite.renderer.config.ts',
        '--outDir',
        fresh,
        '--logLevel',
        'warn',
      ],
      {
        cwd: root,
        stdio: 'inherit',
        timeout: 120_000,
      },
    );
    const old = `${target}.old-${process.pid}`;
    if (existsSync(target)) renameSync(target, old);
    try {
      renameSync(fresh, target);
    } catch {
      // Another file's build was put in place between the two renames: it is as fresh as ours.
      rmSync(fresh, { recursive: true, force: true });
    }
    rmSync(old, { recursive: true, force: true });
  }
  if (!existsSync(join(root, 'dist', 'cli.js'))) {
    execFileSync(process.execPath, [join(root, 'scripts', 'build-cli.mjs')], {
      cwd: root,
      stdio: 'inherit',
      timeout: 120_000,
    });
  }
}
