import { join } from 'node:path';
import type { RequestRecord } from '../../shared/request-record.js';
import { RequestLineSchema, TelemetryLineSchema } from '../../shared/run-lines-schema.js';
import type { ClientSample, EngineSample, GpuSample } from '../../shared/telemetry.js';
import { RUN_FILES } from './files.js';
import { readJsonl, streamJsonl, type JsonlReport } from './jsonl.js';
import { cleanRequest, cleanSample } from './redact-folder.js';

/** A GPU or engine sample with the server configuration it was taken under (absent in older folders). */
export type Tagged<T> = T & { serverConfigIndex?: number };

/** A run folder's telemetry.jsonl, split by kind, cleaned of secrets, and what reading it found. */
export interface FolderTelemetry {
  gpu: Tagged<GpuSample>[];
  engine: Tagged<EngineSample>[];
  client: ClientSample[];
  report: JsonlReport;
}

const source = (dir: string, file: string): { path: string; file: string; what: string } => ({
  path: join(dir, file),
  file,
  what: `${file} in ${dir}`,
});

/**
 * Streams requests.jsonl: each request line that reads, cleaned of secrets, to `onRequest` with its size in
 * bytes; nothing is kept here, so a folder of any size streams in constant memory.
 */
export function streamRequests(
  dir: string,
  secrets: readonly string[],
  onRequest: (request: RequestRecord, bytes: number) => void,
): Promise<JsonlReport> {
  return streamJsonl(source(dir, RUN_FILES.requests), RequestLineSchema, (value, _line, bytes) =>
    onRequest(cleanRequest(value, secrets), bytes),
  );
}

/** requests.jsonl pulled a request at a time (a reader that walks several folders at once), cleaned of secrets. */
export async function* readRequestLines(
  dir: string,
  secrets: readonly string[],
): AsyncGenerator<RequestRecord, JsonlReport, undefined> {
  const lines = readJsonl(source(dir, RUN_FILES.requests), RequestLineSchema);
  for (;;) {
    const next = await lines.next();
    if (next.done) return next.value;
    yield cleanRequest(next.value.value, secrets);
  }
}

/** Reads telemetry.jsonl (samples are small and few: one a second per GPU), split by kind, cleaned of secrets. */
export async function readTelemetry(dir: string, secrets: readonly string[]): Promise<FolderTelemetry> {
  const out: Omit<FolderTelemetry, 'report'> = { gpu: [], engine: [], client: [] };
  const report = await streamJsonl(source(dir, RUN_FILES.telemetry), TelemetryLineSchema, (line) => {
    // Samples keep their `kind`: the exporters read the fields of each kind, and the tag does no harm.
    const sample = cleanSample(line, secrets);
    if (sample.kind === 'gpu') out.gpu.push(sample);
    else if (sample.kind === 'engine') out.engine.push(sample);
    else out.client.push(sample);
  });
  return { ...out, report };
}
