import { mkdir, rename, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { UserError } from '../errors.js';
import { RUN_FILES, RUN_JSON_MAX_BYTES, loadRun } from './run-store.js';
import { readTextFile } from '../bounded-file.js';
import { nodeRunFs, replaceFile } from './run-fs.js';

/** Where deleted runs go when there is no OS trash (browser mode): a folder the run list skips. */
export const TRASH_DIR = '.trash';

/** A run folder under `outDir`, by id; an id that could walk out of the runs folder is refused. */
export function runFolder(outDir: string, runId: string): string {
  // Ids are folder names; refuse anything that could walk out of the runs folder.
  if (basename(runId) !== runId || runId.startsWith('.')) throw new UserError(`invalid run id '${runId}'`);
  return join(outDir, runId);
}

/** What managing runs needs from its host: the OS trash and file manager where there are some. */
export interface RunActionsOptions {
  outDir: string;
  /** Moves a folder to the OS trash (Electron's shell.trashItem); default: `<outDir>/.trash/`. */
  trash?: (path: string) => Promise<void>;
  /** Opens a folder in the file manager (Electron's shell.openPath: '' or an error text); default: none. */
  openPath?: (path: string) => Promise<string>;
  /** The id of the run in progress, which is not to be renamed or deleted. */
  activeRunId: () => Promise<string | null>;
}

/** Rename, delete and open of past runs, every id checked to stay inside the runs folder. */
export interface RunActions {
  renameRun(runId: string, label: string): Promise<void>;
  deleteRun(runId: string): Promise<{ movedTo: string | null }>;
  openRunFolder(runId: string): Promise<{ path: string; opened: boolean }>;
}

/** Creates the run actions over one runs folder. */
export function createRunActions(options: RunActionsOptions): RunActions {
  const { outDir, trash, openPath, activeRunId } = options;
  const existing = async (runId: string): Promise<string> => {
    const dir = runFolder(outDir, runId);
    if (!(await stat(dir).catch(() => null))?.isDirectory()) throw new UserError(`run ${runId} not found in ${outDir}`);
    return dir;
  };
  const notActive = async (runId: string, what: string): Promise<void> => {
    if ((await activeRunId()) === runId)
      throw new UserError(`run ${runId} is still going: ${what} it once it has finished or been cancelled`);
  };

  return {
    async renameRun(runId, label) {
      const dir = await existing(runId);
      await notActive(runId, 'rename');
      await loadRun(dir); // an unreadable run.json says why, in its one line, before anything is written
      const file = join(dir, RUN_FILES.record);
      const text = await readTextFile(file, { what: `run.json in ${dir}`, maxBytes: RUN_JSON_MAX_BYTES });
      const record = JSON.parse(text) as { label: string; config?: { label?: string } };
      record.label = label.trim();
      if (record.config) record.config.label = label.trim();
      // Whole file then rename: a crash mid-write keeps the old run.json, never half of one.
      await replaceFile(nodeRunFs, file, JSON.stringify(record, null, 2) + '\n');
    },
    async deleteRun(runId) {
      const dir = await existing(runId);
      await notActive(runId, 'delete');
      if (trash) {
        await trash(dir).catch((error: unknown) => {
          throw new UserError(`could not move ${dir} to the trash: ${(error as Error).message}; delete it by hand`);
        });
        return { movedTo: null };
      }
      const bin = join(outDir, TRASH_DIR);
      await mkdir(bin, { recursive: true });
      let target = join(bin, runId);
      for (let n = 2; await stat(target).catch(() => null); n++) target = join(bin, `${runId}-${n}`);
      await rename(dir, target);
      return { movedTo: target };
    },
    async openRunFolder(runId) {
      const dir = await existing(runId);
      if (!openPath) return { path: dir, opened: false };
      const problem = await openPath(dir);
      if (problem) throw new UserError(`could not open ${dir}: ${problem}`);
      return { path: dir, opened: true };
    },
  };
}
