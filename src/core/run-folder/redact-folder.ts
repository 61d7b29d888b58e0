import type { ServerConfig } from '../../shared/config.js';
import type { RequestRecord } from '../../shared/request-record.js';
import type { RunRecord } from '../../shared/run-record.js';
import type { TelemetryLineRecord } from '../../shared/run-lines-schema.js';
import { REDACTED, redact, redactLine, redactRecord, secretValues } from '../servers/redact.js';

// The one redaction policy of everything read from a run folder: a folder written by an older servebench (or
// edited by hand) may still hold a secret, so the record and every line leave this module cleaned, whichever
// reader (the app, report, compare, run --from) asked.

/** Secret values still in a record (the API key, secret env values and flags of the server and its variants). */
export function recordSecrets(record: RunRecord): string[] {
  const config = record.config;
  const values = new Set<string>(secretValues(config.server));
  for (const v of config.serverVariants ?? []) for (const x of secretValues(v as Partial<ServerConfig>)) values.add(x);
  if (config.apiKey && config.apiKey !== REDACTED && config.apiKey !== '<redacted>') values.add(config.apiKey);
  return [...values].filter((v) => v.length >= 4 && v !== REDACTED).sort((a, b) => b.length - a.length);
}

/** The record with every secret removed (config, command line, engine URL, error, check details). */
export function sanitizeRecord(record: RunRecord, secrets: readonly string[] = recordSecrets(record)): RunRecord {
  const safe = redactRecord(record, secrets);
  const config = safe.config;
  const engine = safe.environment.engine;
  const clean = (s: string | undefined): string | undefined => (s === undefined ? undefined : redactLine(s, secrets));
  return {
    ...safe,
    error: clean(safe.error),
    config: {
      ...config,
      apiKey: config.apiKey ? REDACTED : undefined,
      server: redact(config.server),
      serverVariants: config.serverVariants?.map((v) => redact(v as Partial<ServerConfig>) as Record<string, unknown>),
    },
    environment: { ...safe.environment, engine: { ...engine, command: clean(engine.command) } },
    checks: safe.checks.map((c) => ({ ...c, detail: redactLine(c.detail, secrets) })),
    levels: safe.levels.map((l) => ({
      ...l,
      checks: l.checks.map((c) => ({ ...c, detail: redactLine(c.detail, secrets) })),
    })),
  };
}

/** A request line as it may leave the folder: its error text (a server's words) cleaned of secrets. */
export function cleanRequest(request: RequestRecord, secrets: readonly string[]): RequestRecord {
  return request.error === undefined ? request : { ...request, error: redactLine(request.error, secrets) };
}

/** A telemetry sample as it may leave the folder: values read but rejected (raw text) cleaned of secrets. */
export function cleanSample(sample: TelemetryLineRecord, secrets: readonly string[]): TelemetryLineRecord {
  if (sample.kind === 'client' || !sample.rejected) return sample;
  const rejected = Object.fromEntries(Object.entries(sample.rejected).map(([k, v]) => [k, redactLine(v, secrets)]));
  return { ...sample, rejected };
}
