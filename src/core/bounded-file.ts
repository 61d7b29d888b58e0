import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { UserError } from './errors.js';

// Every file a user names or a run folder holds is read through here: a FIFO would block the reader forever,
// /dev/zero never ends, and a file past V8's string limit dies with "Invalid string length". The check is made
// on the opened descriptor (fstat), so a name swapped between a stat and the open cannot slip through.

/** Why a file was refused: not there, not a regular file, over the cap, or another read error (its code). */
export type FileRefusal = 'missing' | 'not-regular' | 'too-large' | 'unreadable';

/** A file that cannot be read as asked, in one line naming the fix; `refusal` lets a caller word its own. */
export class FileReadError extends UserError {
  constructor(
    message: string,
    readonly refusal: FileRefusal,
    readonly path: string,
    /** The system's error code where there was one (ENOENT, EACCES ...). */
    readonly errno?: string,
  ) {
    super(message);
    this.name = 'FileReadError';
  }
}

/** How to read one file: what to call it in a message, and the most it may hold. */
export interface FileReadOptions {
  /** Starts every message: `--profile-file x.yaml`, `run.json in runs/a`. */
  what: string;
  /** Bytes past which the file is refused (default: no cap; the caller then streams it). */
  maxBytes?: number;
  /** What the file should be, for the refusal of a FIFO or device: 'a YAML file'. */
  expected?: string;
}

/** 1.5 MiB, 256 MiB: the cap as a user reads it. */
export function byteSize(bytes: number): string {
  if (bytes >= 2 ** 30) return `${+(bytes / 2 ** 30).toFixed(1)} GiB`;
  if (bytes >= 2 ** 20) return `${+(bytes / 2 ** 20).toFixed(1)} MiB`;
  if (bytes >= 2 ** 10) return `${+(bytes / 2 ** 10).toFixed(1)} KiB`;
  return `${bytes} bytes`;
}

// Opening a FIFO without O_NONBLOCK waits for a writer; with it the open returns and fstat tells.
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0);

function openError(error: unknown, path: string, o: FileReadOptions): FileReadError {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENOENT' || code === 'ENOTDIR')
    return new FileReadError(`${o.what}: no such file; check the path`, 'missing', path, code);
  if (code === 'EISDIR') return notRegular(path, o);
  if (code === 'EACCES' || code === 'EPERM')
    return new FileReadError(`${o.what}: permission denied; make it readable to this user`, 'unreadable', path, code);
  const why = code ?? (error instanceof Error ? error.message : String(error));
  return new FileReadError(`${o.what}: cannot read it (${why}); check the path`, 'unreadable', path, code);
}

function notRegular(path: string, o: FileReadOptions): FileReadError {
  return new FileReadError(
    `${o.what} is not a regular file (a folder, FIFO or device): give ${o.expected ?? 'a file'}`,
    'not-regular',
    path,
  );
}

function tooLarge(path: string, o: FileReadOptions): FileReadError {
  return new FileReadError(
    `${o.what} is larger than ${byteSize(o.maxBytes ?? 0)}, the most servebench reads of it: ${o.expected ? `not ${o.expected}` : 'check the file'}`,
    'too-large',
    path,
  );
}

/** Opens a file for reading only if it is a regular file (checked on the descriptor); one line otherwise. */
export async function openRegularFile(path: string, options: FileReadOptions): Promise<FileHandle> {
  const handle = await open(path, OPEN_FLAGS).catch((error: unknown) => {
    throw openError(error, path, options);
  });
  const info = await handle.stat().catch(async (error: unknown) => {
    await handle.close();
    throw openError(error, path, options);
  });
  if (!info.isFile()) {
    await handle.close();
    throw notRegular(path, options);
  }
  if (options.maxBytes !== undefined && info.size > options.maxBytes) {
    await handle.close();
    throw tooLarge(path, options);
  }
  return handle;
}

/** A regular file's text, refused in one line past `maxBytes` (also when it grows while being read). */
export async function readTextFile(path: string, options: FileReadOptions): Promise<string> {
  const handle = await openRegularFile(path, options);
  try {
    const max = options.maxBytes ?? Infinity;
    const chunks: Buffer[] = [];
    let size = 0;
    for (;;) {
      const { bytesRead, buffer } = await handle.read(Buffer.alloc(64 * 1024), 0, 64 * 1024, null);
      if (bytesRead === 0) break;
      size += bytesRead;
      if (size > max) throw tooLarge(path, options);
      chunks.push(buffer.subarray(0, bytesRead));
    }
    return Buffer.concat(chunks, size).toString('utf8');
  } catch (error) {
    if (error instanceof FileReadError) throw error;
    throw openError(error, path, options);
  } finally {
    await handle.close();
  }
}

/** readTextFile for the synchronous readers (a config file read while the flags are parsed). */
export function readTextFileSync(path: string, options: FileReadOptions): string {
  let fd: number;
  try {
    fd = openSync(path, OPEN_FLAGS);
  } catch (error) {
    throw openError(error, path, options);
  }
  try {
    const info = fstatSync(fd);
    if (!info.isFile()) throw notRegular(path, options);
    const max = options.maxBytes ?? Infinity;
    if (info.size > max) throw tooLarge(path, options);
    const chunks: Buffer[] = [];
    let size = 0;
    for (;;) {
      const chunk = Buffer.alloc(64 * 1024);
      const n = readSync(fd, chunk, 0, chunk.length, null);
      if (n === 0) break;
      size += n;
      if (size > max) throw tooLarge(path, options);
      chunks.push(chunk.subarray(0, n));
    }
    return Buffer.concat(chunks, size).toString('utf8');
  } catch (error) {
    if (error instanceof FileReadError) throw error;
    throw openError(error, path, options);
  } finally {
    closeSync(fd);
  }
}
