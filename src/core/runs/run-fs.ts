import { randomBytes } from 'node:crypto';
import { renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { appendFile, open, realpath, rename, stat, truncate, unlink } from 'node:fs/promises';
import { basename, dirname, join, resolve, sep } from 'node:path';
import { UserError } from '../errors.js';
import { makeDirs } from './make-dirs.js';

/** The file operations a run folder needs; tests pass one that fails like a full disk. */
export interface RunFs {
  /** Writes a whole new file and flushes it to the disk (a temp file before a rename); `mode` for a new file. */
  writeFile(path: string, data: string | Uint8Array, mode?: number): Promise<void>;
  appendFile(path: string, data: string): Promise<void>;
  rename(from: string, to: string): Promise<void>;
  unlink(path: string): Promise<void>;
  truncate(path: string, length: number): Promise<void>;
  /** Size in bytes, or null when the file does not exist. */
  size(path: string): Promise<number | null>;
  writeFileSync(path: string, data: string | Uint8Array): void;
  renameSync(from: string, to: string): void;
  unlinkSync(path: string): void;
}

/** The real file system. */
export const nodeRunFs: RunFs = {
  async writeFile(path, data, mode) {
    const handle = await open(path, 'w', mode);
    try {
      await handle.writeFile(data);
      // Flushed before the rename: after a power cut the new name never points at an empty file.
      await handle.sync();
    } finally {
      await handle.close();
    }
  },
  appendFile: (path, data) => appendFile(path, data),
  rename: (from, to) => rename(from, to),
  unlink: (path) => unlink(path),
  truncate: (path, length) => truncate(path, length),
  async size(path) {
    try {
      return (await stat(path)).size;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
  },
  writeFileSync: (path, data) => writeFileSync(path, data),
  renameSync: (from, to) => renameSync(from, to),
  unlinkSync: (path) => unlinkSync(path),
};

/** What to do about a write error, by its code. */
function diskFix(code: string | undefined): { what: string; fix: string } {
  switch (code) {
    case 'ENOSPC':
      return { what: 'the disk is full', fix: 'free space on it or choose another --out' };
    case 'EDQUOT':
      return { what: 'the disk quota is used up', fix: 'free space in your quota or choose another --out' };
    case 'EROFS':
      return { what: 'the file system is read-only', fix: 'choose a writable --out' };
    case 'EACCES':
    case 'EPERM':
      return { what: 'no permission to write there', fix: 'choose another --out or fix its permissions' };
    case 'ENOENT':
      return { what: 'the folder is gone (removed during the run?)', fix: 'keep the run folder while it runs' };
    case 'ENOTDIR':
    case 'EEXIST':
      return { what: 'a file is in the way of the folder', fix: 'choose a folder for --out' };
    case 'EIO':
      return { what: 'the disk reported an I/O error', fix: 'check the disk, or choose another --out' };
    default:
      return { what: code ? `the write failed (${code})` : 'the write failed', fix: 'choose another --out' };
  }
}

/** A run folder that cannot be written: the run stops (exit 2) and says why and what to do. */
export class DiskError extends UserError {
  readonly code: string | undefined;
  readonly file: string;
  constructor(file: string, cause: unknown) {
    const code = (cause as NodeJS.ErrnoException | undefined)?.code;
    const { what, fix } = diskFix(code);
    super(`cannot write ${file}: ${what}${code && !what.includes(code) ? ` (${code})` : ''}; ${fix}`, 2);
    this.name = 'DiskError';
    this.code = code;
    this.file = file;
  }
}

const DISK_CODES = new Set(['ENOSPC', 'EDQUOT', 'EROFS', 'EACCES', 'EPERM', 'EIO']);

/** A file-system error on a named path (from any writer, e.g. the server's files) as a DiskError; else null. */
export function diskErrorOf(error: unknown): DiskError | null {
  const e = error as NodeJS.ErrnoException | undefined;
  if (!e || typeof e.path !== 'string' || !DISK_CODES.has(e.code ?? '')) return null;
  // Running a program is not writing a file (an EACCES there is a bad --python, not a disk).
  if (e.syscall?.startsWith('spawn') || e.syscall === 'kill') return null;
  return new DiskError(e.path, e);
}

/** True when retrying with less data could succeed (the disk or quota is full, not forbidden). */
export function isOutOfSpace(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ENOSPC' || code === 'EDQUOT';
}

let temps = 0;

/** A temp name beside `file` that no other writer uses: this process's pid, a counter and random bytes. */
function tempName(file: string): string {
  return `${file}.${process.pid}-${++temps}-${randomBytes(3).toString('hex')}.tmp`;
}

/** Options of a replace: the mode of a new file (settings are 0600). */
export interface ReplaceOptions {
  mode?: number;
}

/**
 * Replaces `file` atomically, the one way servebench writes a whole file (run folders, reports, comparisons,
 * settings, exports): writes a temp file of its own beside it, flushed, then renames it over `file`. On
 * failure the temp file is removed and `file` keeps its previous content; writers at once never share a temp.
 */
export async function replaceFile(
  fs: RunFs,
  file: string,
  data: string | Uint8Array,
  options: ReplaceOptions = {},
): Promise<void> {
  const tmp = tempName(file);
  try {
    await fs.writeFile(tmp, data, options.mode);
    await fs.rename(tmp, file);
  } catch (error) {
    await fs.unlink(tmp).catch(() => undefined);
    throw error;
  }
}

/** replaceFile for a process on its way out (or a synchronous writer): its own temp name, as every replace. */
export function replaceFileSync(fs: RunFs, file: string, text: string): void {
  const tmp = tempName(file);
  try {
    fs.writeFileSync(tmp, text);
    fs.renameSync(tmp, file);
  } catch (error) {
    try {
      fs.unlinkSync(tmp);
    } catch {
      // It was never created.
    }
    throw error;
  }
}

/**
 * Appends whole lines: when the append fails part-way (a full disk writes what fits), the file is cut
 * back to its length before, so it never ends in half a line.
 */
export async function appendWhole(fs: RunFs, file: string, text: string): Promise<void> {
  const before = await fs.size(file);
  try {
    await fs.appendFile(file, text);
  } catch (error) {
    if (before === null) await fs.unlink(file).catch(() => undefined);
    else await fs.truncate(file, before).catch(() => undefined);
    throw error;
  }
}

const PROBE_BYTES = 64 * 1024;

/**
 * Folders of the operating system: no run folder belongs in them or under them, even where root could write.
 * (/proc and /sys refuse every folder themselves; /dev/shm is a fair place for a RAM disk.)
 */
const SYSTEM_FOLDERS = [
  '/bin',
  '/boot',
  '/etc',
  '/lib',
  '/lib32',
  '/lib64',
  '/libx32',
  '/sbin',
  '/usr',
  '/System',
  '/Library',
  '/Applications',
  'C:\\Windows',
  'C:\\Program Files',
  'C:\\Program Files (x86)',
];

/** The path with symbolic links of its existing part resolved (a link to /etc is /etc). */
async function realTarget(path: string): Promise<string> {
  const full = resolve(path);
  const rest: string[] = [];
  for (let at = full; ; at = dirname(at)) {
    const real = await realpath(at).catch(() => null);
    if (real !== null) return rest.length ? join(real, ...rest.reverse()) : real;
    if (dirname(at) === at) return full;
    rest.push(basename(at));
  }
}

/** Why `path` (after its links) is a system folder or the root, in a phrase; null when it is not one. */
async function systemFolderProblem(path: string): Promise<string | null> {
  const real = await realTarget(path);
  if (dirname(real) === real) return `${real} is the root of the file system`;
  const lower = real.toLowerCase();
  const hit = SYSTEM_FOLDERS.find((f) => lower === f.toLowerCase() || lower.startsWith(f.toLowerCase() + sep));
  return hit ? `${real} is ${real === hit ? 'a system folder' : `inside the system folder ${hit}`}` : null;
}

/**
 * Makes sure run folders can be written under `outDir` before anything is launched: creates it when
 * missing, then writes and removes a small probe file. Throws a UserError naming the fix.
 */
export async function checkOutWritable(outDir: string, fs: RunFs = nodeRunFs): Promise<void> {
  const refuse = (error: unknown, doing: string): never => {
    const code = (error as NodeJS.ErrnoException).code;
    const { what, fix } = diskFix(code);
    throw new UserError(`--out ${outDir}: cannot ${doing}: ${what}; ${fix}`);
  };
  const system = await systemFolderProblem(outDir);
  if (system) throw new UserError(`--out ${outDir}: ${system}; choose a folder of your own, e.g. ~/servebench-runs`);
  try {
    const s = await stat(outDir);
    if (!s.isDirectory()) throw new UserError(`--out ${outDir} is not a folder; choose a folder (created if missing)`);
  } catch (error) {
    if (error instanceof UserError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOTDIR') refuse(error, 'create the folder');
    if (code !== 'ENOENT') refuse(error, 'read the folder');
    await makeDirs(outDir).catch((e: unknown) => {
      // A parent that cannot hold folders (under /proc, a dangling link) answers ENOENT.
      if ((e as NodeJS.ErrnoException).code === 'ENOENT')
        throw new UserError(`--out ${outDir}: cannot create the folder (ENOENT): its parent cannot be written; choose a writable --out`);
      refuse(e, 'create the folder');
    });
  }
  const probe = join(outDir, `.servebench-write-check-${process.pid}`);
  try {
    // Big enough to notice a disk with almost nothing left, small enough to cost nothing.
    await fs.writeFile(probe, 'x'.repeat(PROBE_BYTES));
  } catch (error) {
    await fs.unlink(probe).catch(() => undefined);
    refuse(error, 'write there');
  }
  await fs.unlink(probe).catch(() => undefined);
}
