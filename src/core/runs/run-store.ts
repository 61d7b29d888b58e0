import { renameSync, writeFileSync } from 'node:fs';
import { appendFile, mkdir, readFile, readdir, rename, stat, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { RequestRecord } from '../../shared/request-record.js';
import type { RunRecord } from '../../shared/run-record.js';
import type { EngineSample, GpuSample } from '../../shared/telemetry.js';

/** The files of one run folder. */
export const RUN_FILES = {
  record: 'run.json',
  requests: 'requests.jsonl',
  summary: 'summary.csv',
  telemetry: 'telemetry.jsonl',
  serverLog: 'server.log',
} as const;

/** `20261130T094800Z` from a date: sortable, safe in file names. */
export function runTimestamp(date: Date): string {
  return date.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
}

/** Label reduced to characters that are safe in a folder name. */
export function safeLabel(label: string): string {
  return label.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 60) || 'run';
}

/** Creates `<out>/<UTC timestamp>-<label>/` (suffixed when taken) and returns its absolute path. */
export async function createRunDir(outDir: string, label: string, startedAt: Date): Promise<string> {
  const base = join(resolve(outDir), `${runTimestamp(startedAt)}-${safeLabel(label)}`);
  await mkdir(resolve(outDir), { recursive: true });
  for (let i = 0; ; i++) {
    const dir = i === 0 ? base : `${base}-${i + 1}`;
    try {
      await mkdir(dir);
      return dir;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
}

/** Writes a run folder as the run goes, so a crash or cancel loses nothing already measured. */
export class RunWriter {
  readonly dir: string;
  private queue: Promise<void> = Promise.resolve();

  constructor(dir: string) {
    this.dir = dir;
  }

  /** run.json written synchronously: the last act of a process that is being forced to exit. */
  writeRecordSync(record: RunRecord): void {
    const file = join(this.dir, RUN_FILES.record);
    writeFileSync(`${file}.tmp`, `${JSON.stringify(record, null, 2)}\n`);
    renameSync(`${file}.tmp`, file);
  }

  /** run.json, replaced atomically (a reader never sees half a file). */
  writeRecord(record: RunRecord): Promise<void> {
    return this.enqueue(async () => {
      const file = join(this.dir, RUN_FILES.record);
      await writeFile(`${file}.tmp`, `${JSON.stringify(record, null, 2)}\n`);
      await rename(`${file}.tmp`, file);
    });
  }

  appendRequests(records: RequestRecord[]): Promise<void> {
    if (records.length === 0) return this.queue;
    const text = records.map((r) => JSON.stringify(r)).join('\n') + '\n';
    return this.enqueue(() => appendFile(join(this.dir, RUN_FILES.requests), text));
  }

  appendLines(file: string, lines: string[]): Promise<void> {
    if (lines.length === 0) return this.queue;
    return this.enqueue(() => appendFile(join(this.dir, file), lines.join('\n') + '\n'));
  }

  writeText(file: string, text: string): Promise<void> {
    return this.enqueue(() => writeFile(join(this.dir, file), text));
  }

  /** Resolves when every queued write is on disk. */
  flush(): Promise<void> {
    return this.queue;
  }

  /** Writes that failed (disk full, folder removed): one line each; later writes still run. */
  readonly errors: string[] = [];

  private enqueue(task: () => Promise<void>): Promise<void> {
    // One failed write must not stop the ones after it (the final run.json above all).
    this.queue = this.queue.then(task).catch((error: unknown) => {
      this.errors.push(error instanceof Error ? error.message : String(error));
    });
    return this.queue;
  }
}

/** Loads run.json from a run folder (or the file itself). */
export async function loadRun(path: string): Promise<RunRecord> {
  const file = path.endsWith('.json') ? path : join(path, RUN_FILES.record);
  return JSON.parse(await readFile(file, 'utf8')) as RunRecord;
}

/** Loads requests.jsonl of a run folder. */
export async function loadRequests(dir: string): Promise<RequestRecord[]> {
  let text: string;
  try {
    text = await readFile(join(dir, RUN_FILES.requests), 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter((line) => line.length > 0)
    .map((line) => JSON.parse(line) as RequestRecord);
}

/** Loads telemetry.jsonl of a run folder, split by kind (gpu, engine; client samples are left out). */
export async function loadTelemetry(dir: string): Promise<{ gpu: GpuSample[]; engine: EngineSample[] }> {
  const out: { gpu: GpuSample[]; engine: EngineSample[] } = { gpu: [], engine: [] };
  let text: string;
  try {
    text = await readFile(join(dir, RUN_FILES.telemetry), 'utf8');
  } catch {
    return out;
  }
  for (const line of text.split('\n')) {
    if (!line) continue;
    const sample = JSON.parse(line) as { kind?: string };
    if (sample.kind === 'gpu') out.gpu.push(sample as unknown as GpuSample);
    else if (sample.kind === 'engine') out.engine.push(sample as unknown as EngineSample);
  }
  return out;
}

/** A line of a run listing. */
export interface RunListing {
  dir: string;
  id: string;
  label: string;
  startedAt: string;
  status: RunRecord['status'];
  simulated: boolean;
  levels: number;
}

/** Lists the run folders under `outDir`, newest first; folders without a readable run.json are skipped. */
export async function listRuns(outDir: string): Promise<RunListing[]> {
  let names: string[];
  try {
    names = await readdir(resolve(outDir));
  } catch {
    return [];
  }
  const out: RunListing[] = [];
  for (const name of names) {
    const dir = join(resolve(outDir), name);
    try {
      if (!(await stat(dir)).isDirectory()) continue;
      const r = await loadRun(dir);
      out.push({ dir, id: r.id, label: r.label, startedAt: r.startedAt, status: r.status, simulated: r.simulated, levels: r.levels.length });
    } catch {
      // Not a run folder.
    }
  }
  return out.sort((a, b) => b.startedAt.localeCompare(a.startedAt));
}
