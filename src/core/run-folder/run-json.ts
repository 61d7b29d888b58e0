import { stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import type { RunRecord } from '../../shared/run-record.js';
import { decodeRunJson } from '../../shared/run-record-schema.js';
import { FileReadError, readTextFile } from '../bounded-file.js';
import { UserError } from '../errors.js';
import { withLiveStatus } from '../runs/writer-identity.js';
import { RUN_FILES, RUN_JSON_MAX_BYTES } from './files.js';

/**
 * Loads run.json from a run folder (or the file itself), validated by its schema: one clear line for a missing
 * file, a damaged one or a newer servebench's. A run marked 'running' whose writer process is gone comes back
 * 'interrupted'. The record is as written (secrets included): readers that hand it on clean it (redact-folder.ts).
 */
export async function loadRun(path: string): Promise<RunRecord> {
  const file = path.endsWith('.json') ? path : join(path, RUN_FILES.record);
  const dir = dirname(file);
  let text: string;
  try {
    text = await readTextFile(file, {
      what: `run.json in ${dir}`,
      maxBytes: RUN_JSON_MAX_BYTES,
      expected: 'a run record',
    });
  } catch (error) {
    if (error instanceof FileReadError && error.refusal !== 'missing') throw error;
    throw new UserError(`no run.json in ${dir}: give a run folder (e.g. runs/20261130T094800Z-demo)`);
  }
  const decoded = decodeRunJson(text);
  if ('problem' in decoded) throw new UserError(`run.json in ${dir} ${decoded.problem}`);
  return withLiveStatus(decoded.record);
}

/** The run folder a path names (the folder, or its run.json), checked to be a folder; one line otherwise. */
export async function runFolderPath(path: string): Promise<string> {
  const dir = resolve(path.endsWith('.json') && basename(path) === RUN_FILES.record ? join(path, '..') : path);
  const info = await stat(dir).catch(() => null);
  if (!info) throw new UserError(`no run folder at ${dir}: give a folder under runs/ (servebench run prints it)`);
  if (!info.isDirectory()) throw new UserError(`${dir} is not a run folder: give the folder that holds run.json`);
  return dir;
}
