import { mkdtemp, rm, stat, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { UserError } from '../../../src/core/errors.js';
import { makeDirs, type DirOps } from '../../../src/core/runs/make-dirs.js';
import { checkOutWritable } from '../../../src/core/runs/run-fs.js';

const enoent = (path: string): NodeJS.ErrnoException =>
  Object.assign(new Error(`ENOENT: no such file or directory, mkdir '${path}'`), { code: 'ENOENT' });

/** A procfs-like tree: '/', '/proc' exist, and any mkdir under /proc answers ENOENT. */
function procLike(): DirOps & { calls: string[] } {
  const existing = new Set(['/', '/proc']);
  const calls: string[] = [];
  return {
    calls,
    exists: async (path) => existing.has(path),
    mkdir: async (path) => {
      calls.push(path);
      if (calls.length > 100) throw new Error('mkdir loop');
      if (path.startsWith('/proc/')) throw enoent(path);
      existing.add(path);
    },
  };
}

describe('makeDirs', () => {
  let dir: string | undefined;
  afterEach(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
    dir = undefined;
  });

  it('creates every missing folder top down', async () => {
    dir = await mkdtemp(join(tmpdir(), 'sb-makedirs-'));
    await makeDirs(join(dir, 'a', 'b', 'c'));
    expect((await stat(join(dir, 'a', 'b', 'c'))).isDirectory()).toBe(true);
    await makeDirs(join(dir, 'a', 'b', 'c'));
  });

  it('a parent that exists but cannot hold folders (procfs) rejects with ENOENT after one try, no loop', async () => {
    const ops = procLike();
    await expect(makeDirs('/proc/runs/x', ops)).rejects.toMatchObject({ code: 'ENOENT' });
    expect(ops.calls).toEqual(['/proc/runs']);
  });

  it('a folder made by someone else meanwhile (EEXIST) counts as made', async () => {
    const made: string[] = [];
    const existing = new Set(['/']);
    const ops: DirOps = {
      exists: async (path) => existing.has(path),
      mkdir: async (path) => {
        made.push(path);
        existing.add(path);
        if (path === '/a') throw Object.assign(new Error('EEXIST'), { code: 'EEXIST' });
      },
    };
    await makeDirs('/a/b', ops);
    expect(made).toEqual(['/a', '/a/b']);
  });

  it('a dangling symlink in the way (EEXIST, yet no folder there) is refused, not taken as made', async () => {
    dir = await mkdtemp(join(tmpdir(), 'sb-makedirs-'));
    await symlink(join(dir, 'nowhere'), join(dir, 'link'));
    await expect(makeDirs(join(dir, 'link', 'runs'))).rejects.toMatchObject({ code: 'EEXIST' });
    await expect(checkOutWritable(join(dir, 'link', 'runs'))).rejects.toThrow(
      /cannot create the folder: a file is in the way of the folder; choose a folder for --out$/,
    );
  });

  it.runIf(process.platform === 'linux')('--out under /proc: one line naming the fix, not a hang', async () => {
    const error = await checkOutWritable('/proc/servebench-no-such/runs').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UserError);
    expect((error as Error).message).toMatch(/^--out \/proc\/servebench-no-such\/runs: cannot create the folder.*choose a writable --out$/);
  });
});
