import { readdir, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { runHeadline, type RunHeadline } from '../../shared/run-headline.js';
import type { RunRecord } from '../../shared/run-record.js';
import { readTextFile } from '../bounded-file.js';
import { nodeRunFs, replaceFile, type RunFs } from '../runs/run-fs.js';
import { RUN_FILES } from './files.js';
import { loadRun } from './run-json.js';

// Listing a runs folder reads each run.json once: what it found is kept in RUNS_INDEX_FILE, keyed by the
// run.json's identity (inode, size, change and modification times), and a later listing reads again only the
// folders whose run.json changed. A listing of a run still going is never kept (its writer may die meanwhile).

/** The index of a runs folder, beside the run folders. */
export const RUNS_INDEX_FILE = '.servebench-runs-index.json';
/** The index's format: an index of another version is rebuilt (2: each listing carries its headline). */
export const RUNS_INDEX_VERSION = 2;
/** An index past this is not one servebench wrote (10,000 runs take about 4 MiB): it is rebuilt. */
const RUNS_INDEX_MAX_BYTES = 64 * 2 ** 20;
/** run.json files looked at together: enough to keep the disk busy, few enough not to exhaust descriptors. */
const STAT_BATCH = 64;

/** A line of a run listing. */
export interface RunListing {
  dir: string;
  id: string;
  label: string;
  startedAt: string;
  status: RunRecord['status'];
  simulated: boolean;
  levels: number;
  engine?: string;
  model?: string;
  /** Set when run.json is there but cannot be read (damaged, or from a newer servebench): why, in one line. */
  unreadable?: string;
  /** The verdict and headline figures a runs table shows. */
  headline?: RunHeadline;
}

const ListingSchema = z.strictObject({
  id: z.string(),
  label: z.string(),
  startedAt: z.string(),
  status: z.enum(['running', 'completed', 'cancelled', 'failed', 'interrupted']),
  simulated: z.boolean(),
  levels: z.number().int().min(0),
  engine: z.string().optional(),
  model: z.string().optional(),
  unreadable: z.string().optional(),
  headline: z
    .strictObject({
      verdict: z.enum(['pass', 'warn', 'fail']),
      failed: z.array(z.string()),
      warned: z.array(z.string()),
      peakOutputTokPerSec: z.number().nullable(),
      firstTtftP95Ms: z.number().nullable(),
    })
    .optional(),
});
const IndexSchema = z.strictObject({
  version: z.literal(RUNS_INDEX_VERSION),
  entries: z.record(z.string(), z.strictObject({ key: z.string(), listing: ListingSchema })),
});
/** The index file's content: per folder name, its run.json's identity and its listing. */
type RunsIndex = z.infer<typeof IndexSchema>;

/** The index as last read or written by this process, keyed by the index file's identity (a long-lived host keeps one). */
export interface RunsIndexMemo {
  file?: string;
  key?: string;
  index?: RunsIndex;
}

/** What listRuns reads and writes with; tests count the run.json reads. */
export interface ListRunsDeps {
  readRecord?: (dir: string) => Promise<RunRecord>;
  fs?: RunFs;
  /** Spares a long-lived host (the app) reading and validating an index file it wrote itself. */
  memo?: RunsIndexMemo;
}

/** The engine and model of a run, for filtering a list (older records may lack them). */
function runIdentity(r: RunRecord): { engine?: string; model?: string } {
  const engine = r.config?.server?.engine;
  // The model the engine reported serving first (the simulator names its own), else the one asked for.
  const model = r.environment?.engine?.model ?? r.config?.server?.model ?? r.config?.model;
  return { ...(engine ? { engine } : {}), ...(model ? { model } : {}) };
}

/** When a folder was started, from its `20261130T094800Z-` name, else its modification time. */
function folderStart(name: string, mtime: Date): string {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z/.exec(name);
  return m ? `${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}.000Z` : mtime.toISOString();
}

/** The identity of a file as listRuns keys it: inode, size, modification and change times. */
const fileKey = (info: { ino: number; size: number; mtimeMs: number; ctimeMs: number }): string =>
  `${info.ino}:${info.size}:${info.mtimeMs}:${info.ctimeMs}`;

async function readIndex(file: string, memo: RunsIndexMemo | undefined): Promise<RunsIndex> {
  try {
    const key = fileKey(await stat(file));
    if (memo?.index && memo.file === file && memo.key === key) return memo.index;
    const text = await readTextFile(file, { what: file, maxBytes: RUNS_INDEX_MAX_BYTES, expected: 'the runs index' });
    const parsed = IndexSchema.safeParse(JSON.parse(text));
    if (parsed.success) {
      if (memo) Object.assign(memo, { file, key, index: parsed.data });
      return parsed.data;
    }
  } catch {
    // No index yet, or one that cannot be read: it is rebuilt from the run folders.
  }
  return { version: RUNS_INDEX_VERSION, entries: {} };
}

/** Writes the index (a folder that cannot take it costs speed, never the listing) and remembers it. */
async function writeIndex(file: string, index: RunsIndex, deps: ListRunsDeps): Promise<void> {
  try {
    await replaceFile(deps.fs ?? nodeRunFs, file, JSON.stringify(index));
    if (deps.memo) Object.assign(deps.memo, { file, key: fileKey(await stat(file)), index });
  } catch {
    // A read-only runs folder: the next listing reads the run.json files again.
  }
}

type Listing = Omit<RunListing, 'dir'>;

async function readListing(dir: string, name: string, mtime: Date, read: ListRunsDeps['readRecord']): Promise<Listing> {
  try {
    const r = await (read ?? loadRun)(dir);
    return {
      id: r.id,
      label: r.label,
      startedAt: r.startedAt,
      status: r.status,
      simulated: r.simulated,
      levels: r.levels.length,
      ...runIdentity(r),
      headline: runHeadline(r),
    };
  } catch (error) {
    // The list names the folder already: the reason need not repeat its path.
    const why = (error instanceof Error ? error.message : String(error)).replace(`run.json in ${dir} `, 'run.json ');
    const startedAt = folderStart(name, mtime);
    return { id: name, label: name, startedAt, status: 'failed', simulated: false, levels: 0, unreadable: why };
  }
}

/**
 * Lists the run folders under `outDir`, newest first. Folders without run.json are skipped; one whose run.json
 * cannot be read is listed as unreadable, with the reason, so one bad folder never hides the others. Only the
 * run.json files changed since the last listing are read (RUNS_INDEX_FILE); an index that cannot be written
 * (a read-only folder) costs speed, never the listing.
 */
export async function listRuns(outDir: string, deps: ListRunsDeps = {}): Promise<RunListing[]> {
  const root = resolve(outDir);
  let names: string[];
  try {
    names = await readdir(root);
  } catch {
    return [];
  }
  const indexFile = join(root, RUNS_INDEX_FILE);
  const index = await readIndex(indexFile, deps.memo);
  const next: RunsIndex = { version: RUNS_INDEX_VERSION, entries: {} };
  let changed = false;
  const out: RunListing[] = [];
  const one = async (name: string): Promise<void> => {
    const dir = join(root, name);
    const info = await stat(join(dir, RUN_FILES.record)).catch(() => null);
    if (!info?.isFile()) return;
    const key = fileKey(info);
    const known = index.entries[name];
    const listing = known?.key === key ? known.listing : await readListing(dir, name, info.mtime, deps.readRecord);
    if (listing.status !== 'running') {
      next.entries[name] = { key, listing };
      if (known?.key !== key) changed = true;
    }
    out.push({ dir, ...listing });
  };
  for (let i = 0; i < names.length; i += STAT_BATCH) await Promise.all(names.slice(i, i + STAT_BATCH).map(one));
  if (changed || Object.keys(index.entries).some((name) => !next.entries[name])) {
    await writeIndex(indexFile, next, deps);
  }
  // Code-unit order: ISO times sort as text, and 10,000 locale-aware comparisons cost more than the listing.
  const order = (x: string, y: string): number => (x < y ? -1 : x > y ? 1 : 0);
  return out.sort((a, b) => order(b.startedAt, a.startedAt) || order(a.dir, b.dir));
}
