import { getHeapStatistics } from 'node:v8';
import type { RequestRecord } from '../../shared/request-record.js';
import type { RunRecord } from '../../shared/run-record.js';
import type { ClientSample, EngineSample, GpuSample } from '../../shared/telemetry.js';
import { byteSize } from '../bounded-file.js';
import { RUN_FILES } from './files.js';
import { jsonlNotes, type JsonlReport } from './jsonl.js';
import { readTelemetry, streamRequests, type Tagged } from './read-lines.js';
import { recordSecrets, sanitizeRecord } from './redact-folder.js';
import { loadRun, runFolderPath } from './run-json.js';

/**
 * The most request-line text held as records at once: past it whole levels are left out of the per-request
 * figures, named, rather than the process running out of memory. A report peaks at about 13 times the lines it
 * holds (records, then the exporters' own arrays: 2.8 GB for 206 MB), so the bound is a sixteenth of the heap.
 */
export function requestsHeldMaxBytes(heapLimit = getHeapStatistics().heap_size_limit): number {
  return Math.min(256 * 2 ** 20, Math.floor(heapLimit / 16));
}

/** The levels of requests.jsonl left out of the per-request figures, and why. */
interface RequestsLeftOut {
  /** Level indexes (as requests.jsonl numbers them) whose requests were left out. */
  levels: number[];
  /** Request lines left out (they were read, and counted, but not kept). */
  requests: number;
  /** The bound that was reached. */
  heldMaxBytes: number;
}

/** Everything an exporter may use: the run folder's three files, validated and with secrets removed. */
export interface RunFolder {
  dir: string;
  record: RunRecord;
  /** requests.jsonl (warm-up included; exporters filter). */
  requests: RequestRecord[];
  gpu: Tagged<GpuSample>[];
  engine: Tagged<EngineSample>[];
  client: ClientSample[];
  /** Secret values the raw record still held (an older or hand-edited run.json): scrubbed from every export. */
  secrets: string[];
  /** Things a reader should know (lines that could not be read, levels left out ...), one line each. */
  notes: string[];
  /** What reading each JSONL file found (absent for a folder built from run.json alone). */
  reads?: { requests: JsonlReport; telemetry: JsonlReport };
  /** Set when requests.jsonl held more than requestsHeldMaxBytes(): what was left out. */
  leftOut?: RequestsLeftOut;
}

/** How to read a folder for export. */
export interface LoadFolderOptions {
  /** Default requestsHeldMaxBytes(); tests pass a small one. */
  heldMaxBytes?: number;
}

/** Holds request records by level until the bound; past it, whole levels are dropped (never half a level). */
class LevelHolder {
  private held: RequestRecord[] = [];
  private readonly dropped = new Set<number>();
  private heldBytes = 0;
  private droppedLines = 0;
  private full = false;
  constructor(private readonly max: number) {}

  add(request: RequestRecord, bytes: number): void {
    const level = request.levelIndex;
    if (!this.full && this.heldBytes + bytes <= this.max) {
      this.heldBytes += bytes;
      this.held.push(request);
      return;
    }
    // A level cut part-way would report the figures of its first requests as the level's: drop it whole.
    this.full = true;
    if (!this.dropped.has(level)) {
      this.dropped.add(level);
      const kept = this.held.filter((r) => r.levelIndex !== level);
      this.droppedLines += this.held.length - kept.length;
      this.held = kept;
    }
    this.droppedLines++;
  }

  /** The records kept, in the file's order. */
  requests(): RequestRecord[] {
    return this.held;
  }

  leftOut(): RequestsLeftOut | undefined {
    if (this.dropped.size === 0) return undefined;
    const levels = [...this.dropped].sort((a, b) => a - b);
    return { levels, requests: this.droppedLines, heldMaxBytes: this.max };
  }
}

/** One line for the left-out levels: which, how many requests, and where their figures still are. */
function leftOutNote(leftOut: RequestsLeftOut, fileBytes: number): string {
  const levels = leftOut.levels.map((l) => l + 1).join(', ');
  return (
    `${RUN_FILES.requests} (${byteSize(fileBytes)}) holds more than servebench keeps in memory ` +
    `(${byteSize(leftOut.heldMaxBytes)} of requests): ${leftOut.requests} request(s) of level(s) ${levels} were ` +
    `left out of the per-request figures; run.json's summaries of those levels are complete`
  );
}

/**
 * Reads a run folder for export: run.json validated and cleaned of secrets, requests.jsonl and telemetry.jsonl
 * streamed against their line schemas (bad lines and a cut-short last line counted and named in `notes`).
 */
export async function loadRunFolder(path: string, options: LoadFolderOptions = {}): Promise<RunFolder> {
  const dir = await runFolderPath(path);
  const raw = await loadRun(dir);
  const secrets = recordSecrets(raw);
  const record = sanitizeRecord(raw, secrets);
  const holder = new LevelHolder(options.heldMaxBytes ?? requestsHeldMaxBytes());
  const requestsRead = await streamRequests(dir, secrets, (r, bytes) => holder.add(r, bytes));
  const telemetry = await readTelemetry(dir, secrets);
  const leftOut = holder.leftOut();
  const notes = [...jsonlNotes(requestsRead), ...jsonlNotes(telemetry.report)];
  if (leftOut) notes.push(leftOutNote(leftOut, requestsRead.bytes));
  return {
    dir,
    record,
    requests: holder.requests(),
    gpu: telemetry.gpu,
    engine: telemetry.engine,
    client: telemetry.client,
    secrets,
    notes,
    reads: { requests: requestsRead, telemetry: telemetry.report },
    ...(leftOut ? { leftOut } : {}),
  };
}
