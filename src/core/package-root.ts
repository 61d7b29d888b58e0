import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The servebench package folder (holds resources/ and dist/), found from this module whether bundled or not. */
export function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 8; i++) {
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg)) {
      try {
        if ((JSON.parse(readFileSync(pkg, 'utf8')) as { name?: string }).name === 'servebench') return dir;
      } catch {
        // Unreadable package.json: keep walking up.
      }
    }
    dir = dirname(dir);
  }
  throw new Error('servebench package root not found');
}

/** Path of a file under resources/. */
export function resourcePath(...parts: string[]): string {
  return join(packageRoot(), 'resources', ...parts);
}
