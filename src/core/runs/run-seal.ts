import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { closeSync, constants, fstatSync, mkdirSync, openSync, readSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { userDataDir } from '../user-data-dir.js';
import type { ExecutedSetting } from './recorded-commands.js';

// How `run --from` knows a run folder is this user's own, written on this machine. The writer's pid and
// hostname in run.json are anyone's to type, and a folder unpacked from a colleague's tarball belongs to
// whoever unpacked it. So servebench seals what a run executes with a key only this user can read (32 random
// bytes in the user-data folder, mode 0600): run.json carries HMAC-SHA256(key, run id + executed settings) as
// writer.seal. A folder whose seal checks was written by this user's servebench here; any other (another
// user's, another machine's, hand-edited, or from before seals) has its recorded commands shown and confirmed.

/** The key's file in the user-data folder. */
export const SEAL_KEY_FILE = 'run-seal.key';
const KEY_BYTES = 32;

let cached: { dir: string; key: Buffer | null } | undefined;

/** The key in `dir`, if it is a 32-byte file of this user's that no one else can read or write; else null. */
function readKey(file: string): Buffer | null {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  } catch {
    return null;
  }
  try {
    const info = fstatSync(fd);
    const uid = process.getuid?.();
    // A key others can read or replace proves nothing about who sealed with it.
    if (!info.isFile() || info.size !== KEY_BYTES || (process.platform !== 'win32' && info.mode & 0o077)) return null;
    if (uid !== undefined && info.uid !== uid) return null;
    const key = Buffer.alloc(KEY_BYTES);
    return readSync(fd, key, 0, KEY_BYTES, 0) === KEY_BYTES ? key : null;
  } finally {
    closeSync(fd);
  }
}

/** Creates the key (exclusive create, 0600); null when the folder cannot hold it (then nothing is sealed). */
function createKey(dir: string, file: string): Buffer | null {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const fd = openSync(file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
    try {
      writeSync(fd, randomBytes(KEY_BYTES));
    } finally {
      closeSync(fd);
    }
  } catch {
    // Another servebench made it meanwhile (EEXIST), or the folder is read-only: read what is there.
  }
  return readKey(file);
}

/**
 * This user's seal key, from the user-data folder (SERVEBENCH_CONFIG_DIR, else the OS's), created on first
 * use when `create`; null where there is none (a read-only home: runs are then unsealed, and re-runs ask).
 */
export function sealKey(create: boolean, env: NodeJS.ProcessEnv = process.env): Buffer | null {
  const dir = userDataDir(env);
  if (cached?.dir === dir && (cached.key || !create)) return cached.key;
  const file = join(dir, SEAL_KEY_FILE);
  const key = readKey(file) ?? (create ? createKey(dir, file) : null);
  cached = { dir, key };
  return key;
}

/** The seal of a run's executed settings under `key` (hex). */
export function sealOf(key: Buffer, runId: string, settings: readonly ExecutedSetting[]): string {
  const text = JSON.stringify({ runId, settings: settings.map((s) => [s.setting, s.value]) });
  return createHmac('sha256', key).update(text).digest('hex');
}

/** True when `seal` is this user's seal of these settings (constant-time compare); false without a key. */
export function sealHolds(
  seal: unknown,
  runId: string,
  settings: readonly ExecutedSetting[],
  key: Buffer | null = sealKey(false),
): boolean {
  if (!key || typeof seal !== 'string' || !/^[0-9a-f]{64}$/.test(seal)) return false;
  return timingSafeEqual(Buffer.from(sealOf(key, runId, settings), 'hex'), Buffer.from(seal, 'hex'));
}
