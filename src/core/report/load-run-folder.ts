import { stat } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import type { ServerConfig } from '../../shared/config.js';
import type { RequestRecord } from '../../shared/request-record.js';
import type { RunRecord } from '../../shared/run-record.js';
import type { ClientSample, EngineSample, GpuSample } from '../../shared/telemetry.js';
import { UserError } from '../errors.js';
import { RUN_FILES, loadRun, runFolderLines } from '../runs/run-store.js';
import { REDACTED, redact, redactLine, secretValues } from '../servers/redact.js';

/** A GPU or engine sample with the server configuration it was taken under (absent in older folders). */
export type Tagged<T> = T & { serverConfigIndex?: number };

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
  /** Things a reader should know (lines of requests.jsonl that could not be read ...), one line each. */
  notes: string[];
}

/** Reads and validates run.json: one clear line for a missing file, a damaged file or a newer servebench's file. */
export function readRunRecord(dir: string): Promise<RunRecord> {
  return loadRun(dir);
}

/** Parses JSON lines, skipping (and counting) lines that are not objects: a crash can cut the last line short. */
function parseLines(lines: string[]): { objects: Record<string, unknown>[]; bad: number } {
  const objects: Record<string, unknown>[] = [];
  let bad = 0;
  for (const line of lines) {
    try {
      const value: unknown = JSON.parse(line);
      if (value && typeof value === 'object' && !Array.isArray(value)) objects.push(value as Record<string, unknown>);
      else bad++;
    } catch {
      bad++;
    }
  }
  return { objects, bad };
}

function isRequest(o: Record<string, unknown>): boolean {
  return typeof o.levelIndex === 'number' && typeof o.sendMs === 'number' && Array.isArray(o.chunks);
}

/** Secret values still in a record (the API key, secret env values and flags of the server and its variants). */
export function recordSecrets(record: RunRecord): string[] {
  const config = record.config;
  const values = new Set<string>(secretValues(config.server));
  for (const v of config.serverVariants ?? []) for (const x of secretValues(v as Partial<ServerConfig>)) values.add(x);
  if (config.apiKey && config.apiKey !== REDACTED && config.apiKey !== '<redacted>') values.add(config.apiKey);
  return [...values].filter((v) => v.length >= 4 && v !== REDACTED).sort((a, b) => b.length - a.length);
}

/** The record with every secret removed again (defence in depth: exports leave the machine). */
export function sanitizeRecord(record: RunRecord, secrets: readonly string[] = recordSecrets(record)): RunRecord {
  const config = record.config;
  const engine = record.environment.engine;
  const clean = (s: string | undefined): string | undefined => (s === undefined ? undefined : redactLine(s, secrets));
  let url = engine.url;
  if (url) url = redact({ url }).url;
  return {
    ...record,
    error: clean(record.error),
    config: {
      ...config,
      apiKey: config.apiKey ? REDACTED : undefined,
      server: redact(config.server),
      serverVariants: config.serverVariants?.map((v) => redact(v as Partial<ServerConfig>) as Record<string, unknown>),
    },
    environment: { ...record.environment, engine: { ...engine, url, command: clean(engine.command) } },
    checks: record.checks.map((c) => ({ ...c, detail: redactLine(c.detail, secrets) })),
    levels: record.levels.map((l) => ({ ...l, checks: l.checks.map((c) => ({ ...c, detail: redactLine(c.detail) })) })),
  };
}

/** Reads a run folder for export: run.json validated, requests.jsonl and telemetry.jsonl tolerant of a cut-short last line. */
export async function loadRunFolder(path: string): Promise<RunFolder> {
  const dir = resolve(path.endsWith('.json') && basename(path) === RUN_FILES.record ? join(path, '..') : path);
  const info = await stat(dir).catch(() => null);
  if (!info) throw new UserError(`no run folder at ${dir}: give a folder under runs/ (servebench run prints it)`);
  if (!info.isDirectory()) throw new UserError(`${dir} is not a run folder: give the folder that holds run.json`);
  const raw = await readRunRecord(dir);
  const secrets = recordSecrets(raw);
  const record = sanitizeRecord(raw, secrets);
  const notes: string[] = [];

  const req = parseLines(await runFolderLines(dir, RUN_FILES.requests));
  const requests = req.objects.filter(isRequest) as unknown as RequestRecord[];
  const badRequests = req.bad + req.objects.length - requests.length;
  if (badRequests > 0) notes.push(`${badRequests} line(s) of requests.jsonl could not be read and were left out`);
  for (const r of requests) if (r.error) r.error = redactLine(r.error, secrets);

  const tel = parseLines(await runFolderLines(dir, RUN_FILES.telemetry));
  if (tel.bad > 0) notes.push(`${tel.bad} line(s) of telemetry.jsonl could not be read and were left out`);
  const gpu: Tagged<GpuSample>[] = [];
  const engineSamples: Tagged<EngineSample>[] = [];
  const client: ClientSample[] = [];
  for (const o of tel.objects) {
    if (typeof o.tMs !== 'number') continue;
    if (o.kind === 'gpu') gpu.push(o as unknown as Tagged<GpuSample>);
    else if (o.kind === 'engine') engineSamples.push(o as unknown as Tagged<EngineSample>);
    else if (o.kind === 'client') client.push(o as unknown as ClientSample);
  }
  return { dir, record, requests, gpu, engine: engineSamples, client, secrets, notes };
}

/**
 * The requests of each level of the record, in the record's order. requests.jsonl numbers levels as they were
 * planned, and a level cancelled before it measured anything has no entry in run.json: match by time, not index.
 */
export function requestsByLevel(folder: RunFolder): RequestRecord[][] {
  const groups = new Map<number, RequestRecord[]>();
  for (const r of folder.requests) {
    const g = groups.get(r.levelIndex);
    if (g) g.push(r);
    else groups.set(r.levelIndex, [r]);
  }
  return folder.record.levels.map((level, i) => {
    const byIndex = groups.get(i);
    const inside = (g: RequestRecord[] | undefined): boolean =>
      !!g && g.length > 0 && g.every((r) => r.sendMs >= level.startMs - 1 && r.sendMs <= level.endMs + 1);
    if (inside(byIndex)) return byIndex as RequestRecord[];
    for (const g of groups.values()) if (inside(g)) return g;
    return [];
  });
}
