import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The folder of the package.json named `servebench`, walking up from `from` (a file URL or path): the same
 * code runs from src/ (tests), from dist/ (the bundled CLI) and from out/ (the app).
 */
export function findPackageRoot(from: string = import.meta.url): string | undefined {
  let dir = dirname(from.startsWith('file:') ? fileURLToPath(from) : resolve(from));
  for (;;) {
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg)) {
      try {
        if ((JSON.parse(readFileSync(pkg, 'utf8')) as { name?: unknown }).name === 'servebench') return dir;
      } catch {
        // Unreadable package.json: keep walking up.
      }
    }
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

/** The servebench package folder; throws when this module is not inside it. */
export function packageRoot(): string {
  const root = findPackageRoot();
  if (!root) throw new Error('servebench package root not found');
  return root;
}

/** Path under resources/ (SERVEBENCH_RESOURCES overrides the folder, e.g. in a packaged app). */
export function resourcePath(...parts: string[]): string {
  const override = process.env.SERVEBENCH_RESOURCES;
  return override ? join(override, ...parts) : join(packageRoot(), 'resources', ...parts);
}

/** A bundled file under dist/ (the CLI, the load worker), or undefined when not built. */
export function findDistFile(name: string, from: string = import.meta.url): string | undefined {
  const root = findPackageRoot(from);
  const file = root ? join(root, 'dist', name) : undefined;
  return file && existsSync(file) ? file : undefined;
}

/** The bundled CLI (`dist/cli.js`) that `servebench sim` runs from; undefined when not built. */
export function findCliScript(from: string = import.meta.url): string | undefined {
  return findDistFile('cli.js', from);
}
