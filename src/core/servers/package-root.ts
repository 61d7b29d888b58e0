import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The folder of the package.json named `servebench`, walking up from `from` (a file URL or path). */
export function findPackageRoot(from: string = import.meta.url): string | undefined {
  let dir = dirname(from.startsWith('file:') ? fileURLToPath(from) : resolve(from));
  for (;;) {
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg)) {
      try {
        if ((JSON.parse(readFileSync(pkg, 'utf8')) as { name?: unknown }).name === 'servebench') return dir;
      } catch {
        // unreadable package.json: keep walking
      }
    }
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

/** The bundled CLI (`dist/cli.js`) that `servebench sim` runs from; undefined when not built. */
export function findCliScript(from: string = import.meta.url): string | undefined {
  const root = findPackageRoot(from);
  if (!root) return undefined;
  const script = join(root, 'dist', 'cli.js');
  return existsSync(script) ? script : undefined;
}
