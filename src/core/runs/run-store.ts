import { randomBytes } from 'node:crypto';
import { mkdir, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import type { RequestRecord } from '../../shared/request-record.js';
import type { RunRecord } from '../../shared/run-record.js';
import {
  DiskError,
  appendWhole,
  checkOutWritable,
  isOutOfSpace,
  nodeRunFs,
  replaceFile,
  replaceFileSync,
  type RunFs,
} from './run-fs.js';
import { currentWriter } from './writer-identity.js';
import { executedSettings } from './recorded-commands.js';
import { sealKey, sealOf } from './run-seal.js';
import { scrubSecrets } from '../servers/redact.js';
import { UserError } from '../errors.js';

export { RUN_FILES, RUN_JSON_MAX_BYTES } from '../run-folder/files.js';
import { RUN_FILES } from '../run-folder/files.js';

/** `20261130T094800Z` from a date: sortable, safe in file names. */
export function runTimestamp(date: Date): string {
  return date.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
}

/** Label reduced to characters that are safe in a folder name. */
export function safeLabel(label: string): string {
  return label.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 60) || 'run';
}

/**
 * Checks that `outDir` can hold run folders: a writable folder (created when missing), not a system folder,
 * and not a run folder itself (a new run would nest inside the old one). One line naming the fix otherwise.
 */
export async function checkRunsParent(outDir: string, fs: RunFs = nodeRunFs): Promise<void> {
  const dir = resolve(outDir);
  const runDir = await enclosingRunFolder(dir);
  if (runDir === dir)
    throw new UserError(
      `--out ${outDir} is a run folder (it holds run.json): give the folder that holds run folders, e.g. ${dirname(dir)}`,
    );
  if (runDir !== null)
    throw new UserError(
      `--out ${outDir} is inside the run folder ${runDir} (it holds run.json): give the folder that holds run folders, e.g. ${dirname(runDir)}`,
    );
  await checkOutWritable(dir, fs);
}

/** The run folder that is `dir` or holds it (a folder with a run.json, itself or an ancestor), or null. */
async function enclosingRunFolder(dir: string): Promise<string | null> {
  for (let at = dir; ; at = dirname(at)) {
    if ((await stat(join(at, RUN_FILES.record)).catch(() => null))?.isFile()) return at;
    if (dirname(at) === at) return null;
  }
}

/**
 * Creates `<out>/<UTC timestamp>-<label>/` (suffixed when taken) and returns its absolute path. Checks first
 * that `outDir` is a writable folder, so a bad --out fails in one line before any server is launched.
 */
export async function createRunDir(outDir: string, label: string, startedAt: Date, fs: RunFs = nodeRunFs): Promise<string> {
  const base = join(resolve(outDir), `${runTimestamp(startedAt)}-${safeLabel(label)}`);
  await checkRunsParent(outDir, fs);
  for (let i = 0; ; i++) {
    const dir = i === 0 ? base : `${base}-${i + 1}`;
    try {
      await mkdir(dir);
      return dir;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw new DiskError(dir, error);
    }
  }
}

/** The file that holds disk space for the run's last words (see RunWriter); gone when the run ends. */
export const RESERVE_FILE = '.servebench-reserve';
/** The least space held back: a run.json of a long sweep, twice (the new one is written before the old goes). */
const RESERVE_MIN_BYTES = 256 * 1024;

/** Options of a run writer. */
export interface RunWriterOptions {
  /** File operations (default the real file system; tests inject failures). */
  fs?: RunFs;
  /** Secret values of this run (API key, tokens): blanked in every file, wherever a server echoed them. */
  secrets?: readonly string[];
  /** The key run.json's seal is made with (default: this user's, see run-seal.ts); null: no seal. */
  sealKey?: Buffer | null;
}

/**
 * Writes a run folder as the run goes, so a crash or cancel loses nothing already measured. Every file stays
 * whole: run.json and summary.csv are replaced atomically, jsonl files grow by whole lines. The first write
 * that fails (disk full, read-only, folder gone) is fatal: `fatal` is set, `fatalSignal` aborts (the run
 * stops), later appends are skipped, and only run.json and summary.csv are still tried, to record why.
 */
export class RunWriter {
  readonly dir: string;
  private readonly fs: RunFs;
  private queue: Promise<void> = Promise.resolve();
  private readonly fatalController = new AbortController();
  /** The first write that failed; null while all is well. */
  fatal: DiskError | null = null;
  /** Whether the last write of run.json succeeded (false: the folder's run.json is older than the run). */
  recordSaved = true;
  /** Every write that failed, one line each (the first is `fatal`). */
  readonly errors: string[] = [];

  private readonly secrets: string[];
  private readonly sealKey: Buffer | null;
  /** Bytes held in RESERVE_FILE: freed when a write fails, so the final run.json still fits on a full disk. */
  private reserved = 0;

  constructor(dir: string, options: RunWriterOptions = {}) {
    this.dir = dir;
    this.fs = options.fs ?? nodeRunFs;
    this.sealKey = options.sealKey === undefined ? sealKey(true) : options.sealKey;
    // Files hold JSON: a secret with quotes or backslashes appears there in its escaped form.
    const forms = (options.secrets ?? []).flatMap((v) => [v, JSON.stringify(v).slice(1, -1)]);
    this.secrets = [...new Set(forms)].sort((a, b) => b.length - a.length);
  }

  /** Text as it may reach the disk: known secret values and key-shaped tokens blanked. */
  private clean(text: string): string {
    return scrubSecrets(text, this.secrets);
  }

  /** run.json's text: stamped with this process as its writer, and sealed as this user's (what it runs). */
  private recordText(record: RunRecord, pretty: boolean): string {
    const writer = { ...currentWriter() };
    if (this.sealKey) {
      // Sealed as the file will read back: the settings pass the same scrub as the whole text.
      const settings = executedSettings(record.config).map((s) => ({
        setting: this.clean(s.setting),
        value: this.clean(s.value),
      }));
      writer.seal = sealOf(this.sealKey, record.id, settings);
    }
    const stamped: RunRecord = { ...record, writer };
    return this.clean(pretty ? `${JSON.stringify(stamped, null, 2)}\n` : `${JSON.stringify(stamped)}\n`);
  }

  /** Aborts when a write fails: the run must stop rather than measure what it cannot keep. */
  get fatalSignal(): AbortSignal {
    return this.fatalController.signal;
  }

  /** run.json written synchronously: the last act of a process that is being forced to exit. */
  writeRecordSync(record: RunRecord): void {
    if (this.reserved > 0) {
      // The last write of all: the space held for it is given back first.
      this.reserved = 0;
      try {
        this.fs.unlinkSync(join(this.dir, RESERVE_FILE));
      } catch {
        // Already gone.
      }
    }
    replaceFileSync(this.fs, join(this.dir, RUN_FILES.record), this.recordText(record, true));
  }

  /** run.json, replaced atomically (a reader never sees half a file); stamped with this process as writer. */
  writeRecord(record: RunRecord): Promise<void> {
    const file = join(this.dir, RUN_FILES.record);
    return this.enqueue(file, 'record', async () => {
      const text = this.recordText(record, true);
      try {
        await replaceFile(this.fs, file, text);
      } catch (error) {
        // A full disk may still take the same record without indentation: the final status matters most.
        if (!isOutOfSpace(error)) throw error;
        await replaceFile(this.fs, file, this.recordText(record, false));
      }
      await this.holdReserve(text.length);
    });
  }

  /**
   * Keeps RESERVE_FILE at least twice run.json's size (random bytes: a compressing file system must not shrink
   * it). A disk too full for it is one too full for the run: that failure is the run's first, and fatal.
   */
  private async holdReserve(recordBytes: number): Promise<void> {
    const want = Math.max(RESERVE_MIN_BYTES, 2 * recordBytes);
    if (this.fatal || this.reserved >= want) return;
    const file = join(this.dir, RESERVE_FILE);
    try {
      await this.fs.writeFile(file, randomBytes(want));
      this.reserved = want;
    } catch (error) {
      await this.fs.unlink(file).catch(() => undefined);
      this.reserved = 0;
      this.failed(file, error);
    }
  }

  /** Gives the held space back: after a failed write (for the record of why), and when the run ends. */
  private async releaseReserve(): Promise<void> {
    if (this.reserved === 0) return;
    this.reserved = 0;
    await this.fs.unlink(join(this.dir, RESERVE_FILE)).catch(() => undefined);
  }

  /** Ends the writer: every queued write done, the held space given back (the folder keeps only the run's files). */
  async close(): Promise<void> {
    this.queue = this.queue.then(() => this.releaseReserve());
    await this.queue;
  }

  appendRequests(records: RequestRecord[]): Promise<void> {
    if (records.length === 0) return this.queue;
    const text = this.clean(records.map((r) => JSON.stringify(r)).join('\n') + '\n');
    const file = join(this.dir, RUN_FILES.requests);
    return this.enqueue(file, 'data', () => appendWhole(this.fs, file, text));
  }

  appendLines(name: string, lines: string[]): Promise<void> {
    if (lines.length === 0) return this.queue;
    const file = join(this.dir, name);
    return this.enqueue(file, 'data', () => appendWhole(this.fs, file, this.clean(lines.join('\n') + '\n')));
  }

  /** A whole text file (summary.csv), replaced atomically. */
  writeText(name: string, text: string): Promise<void> {
    const file = join(this.dir, name);
    return this.enqueue(file, 'text', () => replaceFile(this.fs, file, this.clean(text)));
  }

  /** Resolves when every queued write is done (on disk, or failed and recorded). */
  flush(): Promise<void> {
    return this.queue;
  }

  /** One line for the user after a fatal write error: what failed, the fix, and whether run.json says so. */
  failureLine(): string | undefined {
    if (!this.fatal) return undefined;
    return this.recordSaved
      ? this.fatal.message
      : `${this.fatal.message}; run.json could not be updated either (it will read as interrupted)`;
  }

  private enqueue(file: string, kind: 'data' | 'record' | 'text', task: () => Promise<void>): Promise<void> {
    const isRecord = kind === 'record';
    this.queue = this.queue.then(async () => {
      // After a failure, measuring more is pointless: only the record of why is still attempted.
      if (this.fatal && kind === 'data') return;
      // ... in the space held back for it.
      if (this.fatal) await this.releaseReserve();
      try {
        await task();
        if (isRecord) this.recordSaved = true;
      } catch (error) {
        if (isRecord) this.recordSaved = false;
        this.failed(file, error);
      }
    });
    return this.queue;
  }

  /** Counts a failed write; the first one is fatal (the run stops). */
  private failed(file: string, error: unknown): void {
    const diskError = new DiskError(file, error);
    this.errors.push(diskError.message);
    if (!this.fatal) {
      this.fatal = diskError;
      this.fatalController.abort(diskError);
    }
  }
}

// The readers of a run folder live in run-folder/ (one reader, one line policy, one redaction policy).
export { loadRun } from '../run-folder/run-json.js';
export { listRuns, type RunListing } from '../run-folder/list-runs.js';
