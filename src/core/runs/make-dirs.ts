import { mkdir, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';

/** The two calls makeDirs needs; tests pass ones that fail like procfs. */
export interface DirOps {
  /** Resolves false when nothing is at the path (ENOENT); other errors reject. */
  exists(path: string): Promise<boolean>;
  /** Creates one folder whose parent exists (not recursive). */
  mkdir(path: string): Promise<void>;
}

/** The real file system. */
const nodeDirOps: DirOps = {
  async exists(path) {
    try {
      await stat(path);
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
      throw error;
    }
  },
  async mkdir(path) {
    await mkdir(path);
  },
};

/**
 * `mkdir -p` that always ends: each missing folder is created once, top down, and its error is final.
 * Node's `mkdir(…, { recursive: true })` spins forever at full CPU under /proc, where a child's mkdir
 * answers ENOENT although its parent exists.
 */
export async function makeDirs(path: string, ops: DirOps = nodeDirOps): Promise<void> {
  const missing: string[] = [];
  for (let dir = resolve(path); !(await ops.exists(dir)); dir = dirname(dir)) {
    missing.unshift(dir);
    if (dirname(dir) === dir) break;
  }
  for (const dir of missing) {
    await ops.mkdir(dir).catch(async (error: unknown) => {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      // Another process made it meanwhile, or a dangling symlink stands there: only the first is a folder to use.
      if (!(await ops.exists(dir))) throw error;
    });
  }
}
