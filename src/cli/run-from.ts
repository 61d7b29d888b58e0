import { dirname, resolve } from 'node:path';
import { BenchConfigSchema } from '../shared/config.js';
import { DEFAULT_ENGINE, engineHas } from '../shared/engines.js';
import { FIELDS } from '../shared/fields.js';
import { SERVER_KEYS } from '../shared/server-schema.js';
import type { RunOrigin } from '../shared/run-record.js';
import { loadRun } from '../core/runs/run-store.js';
import { loadPreset } from '../core/servers/presets.js';
import { REDACTED } from '../core/servers/redact.js';
import { executedSettings, type ExecutedSetting } from '../core/runs/recorded-commands.js';
import { sealHolds } from '../core/runs/run-seal.js';

type Values = Record<string, unknown>;

/** What `--from RUN_DIR` contributes to a run: the recorded config (secrets dropped), what to say, and the origin. */
export interface RecordedConfig {
  /** The record's config, to lie under --config and the flags. */
  base: Record<string, unknown>;
  /** One line each: secrets to give again, fields this servebench does not know. */
  notices: string[];
  fromRun: RunOrigin;
  /** What the record runs (command, binaries, env, arguments, workload files), as run.json holds it. */
  recorded: ExecutedSetting[];
  /** True when run.json carries this user's seal over `recorded`: written by this user's servebench here. */
  sealed: boolean;
}

/** Placeholders a record holds where a secret was (older records wrote '<redacted>'). */
const isRedacted = (v: unknown): boolean => v === REDACTED || v === '<redacted>';

/** The env with redacted values dropped, and the names that lost their value. */
function dropRedactedEnv(env: unknown): { env: Record<string, string>; dropped: string[] } {
  const out: Record<string, string> = {};
  const dropped: string[] = [];
  for (const [k, v] of Object.entries((env as Record<string, unknown> | undefined) ?? {})) {
    if (isRedacted(v)) dropped.push(k);
    else if (typeof v === 'string') out[k] = v;
  }
  return { env: out, dropped };
}

/** An argv with redacted values dropped with their flag (`--api-key ***`, `--api-key=***`), and those flags. */
function dropRedactedArgs(argv: unknown): { args: string[]; dropped: string[] } {
  const list = Array.isArray(argv) ? argv.map(String) : [];
  const args: string[] = [];
  const dropped: string[] = [];
  for (let i = 0; i < list.length; i++) {
    const arg = list[i] as string;
    const eq = arg.indexOf('=');
    if (arg.startsWith('-') && eq > 0 && isRedacted(arg.slice(eq + 1))) {
      dropped.push(arg.slice(0, eq));
    } else if (arg.startsWith('-') && isRedacted(list[i + 1])) {
      dropped.push(arg);
      i++;
    } else if (isRedacted(arg)) {
      dropped.push('(a redacted argument)');
    } else args.push(arg);
  }
  return { args, dropped };
}

/** A URL without its user name and password (servebench sends none), or undefined when it had none. */
function dropCredentials(url: unknown): string | undefined {
  if (typeof url !== 'string') return undefined;
  try {
    const parsed = new URL(url);
    if (!parsed.username && !parsed.password) return undefined;
    parsed.username = '';
    parsed.password = '';
    return parsed.toString();
  } catch {
    return undefined;
  }
}

const given = (values: Values, flag: string): boolean => values[flag] !== undefined;

/** Env names the command line sets again with --env NAME=VALUE. */
function envGiven(values: Values): Set<string> {
  const pairs = Array.isArray(values.env) ? values.env.map(String) : [];
  return new Set(pairs.map((p) => p.slice(0, Math.max(0, p.indexOf('=')))));
}

/** Settings that belong to one engine's launch or address, declared so: another engine does not inherit them. */
const ENGINE_BOUND = new Set(FIELDS.filter((f) => f.engineBound).map((f) => f.path.split('.')[1] as string));

const isSet = (v: unknown): boolean => v !== undefined && !(Array.isArray(v) && v.length === 0);

/**
 * --preset NAME over the recorded server, key by key (recorded < preset < config file < flags). A preset of
 * another engine drops the recorded engine's address, command and arguments, named in one notice line.
 */
function presetOverRecorded(server: Record<string, unknown>, name: string, notices: string[]): Record<string, unknown> {
  const preset = loadPreset(name) as Record<string, unknown>;
  const out = { ...server };
  const recordedEngine = (server.engine as string | undefined) ?? DEFAULT_ENGINE;
  const presetEngine = preset.engine as string | undefined;
  if (presetEngine !== undefined && presetEngine !== recordedEngine) {
    // The recorded engine's own settings, and those the preset's engine does not have, stay with the old engine.
    const bound = Object.keys(out).filter(
      (k) => k !== 'engine' && (ENGINE_BOUND.has(k) || !engineHas(presetEngine, k)),
    );
    const dropped = bound.filter((k) => isSet(out[k]));
    for (const k of bound) delete out[k];
    if (dropped.length > 0)
      notices.push(
        `--from: --preset ${name} runs ${presetEngine}, not the recorded ${recordedEngine}: recorded server ${dropped.join(', ')} not applied`,
      );
  }
  return { ...out, ...preset };
}

/**
 * Reads RUN_DIR's run.json (one line and exit 2 for a damaged file or a newer servebench's) and returns its
 * config to re-run: redacted secrets dropped (never sent as `***`), the output folder the run folder's parent,
 * and --preset's server settings over the recorded ones.
 */
export async function recordedConfig(runDir: string, values: Values, env: NodeJS.ProcessEnv): Promise<RecordedConfig> {
  const record = await loadRun(runDir);
  const folder = resolve(runDir.endsWith('.json') ? dirname(runDir) : runDir);
  const recorded = executedSettings(record.config);
  const sealed = sealHolds(record.writer?.seal, record.id, recorded);
  const base = structuredClone(record.config) as unknown as Record<string, unknown>;
  const again: string[] = [];
  const notices: string[] = [];
  const recordedServer = { ...((base.server as Record<string, unknown> | undefined) ?? {}) };
  const presetName = typeof values.preset === 'string' ? values.preset : undefined;
  const server = presetName ? presetOverRecorded(recordedServer, presetName, notices) : recordedServer;

  // The API key is never recorded: whatever stands there is a placeholder.
  if (base.apiKey !== undefined) {
    delete base.apiKey;
    if (!given(values, 'api-key') && !env.SERVEBENCH_API_KEY && !env.OPENAI_API_KEY) {
      again.push('--api-key KEY (or SERVEBENCH_API_KEY)');
    }
  }
  const serverEnv = dropRedactedEnv(server.env);
  server.env = serverEnv.env;
  const envAgain = envGiven(values);
  for (const name of serverEnv.dropped) if (!envAgain.has(name)) again.push(`--env ${name}=...`);
  if (server.extraArgs !== undefined) {
    const cleaned = dropRedactedArgs(server.extraArgs);
    server.extraArgs = cleaned.args;
    for (const flag of cleaned.dropped) again.push(`--server-arg=${flag}=...`);
  }
  if (Array.isArray(server.command) && server.command.some(isRedacted) && !given(values, 'cmd')) {
    delete server.command;
    again.push('--cmd "..." (its secret arguments were redacted)');
  }
  const url = dropCredentials(server.url);
  if (url !== undefined) {
    server.url = url;
    if (!given(values, 'url'))
      notices.push(
        `--from: the recorded --url carried a user name or password, which servebench does not send: ${url}`,
      );
  }
  const dcgm = dropCredentials(base.dcgmUrl);
  if (dcgm !== undefined) {
    base.dcgmUrl = dcgm;
    if (!given(values, 'dcgm-url'))
      notices.push(
        `--from: the recorded --dcgm-url carried a user name or password, which servebench does not send: ${dcgm}`,
      );
  }
  // Another engine on the command line: the recorded server address belonged to the old one.
  if (given(values, 'engine')) delete server.url;
  base.server = server;
  base.out = dirname(folder);

  const unknownTop = Object.keys(base).filter((k) => !(k in BenchConfigSchema.shape));
  const unknownServer = Object.keys(server).filter((k) => !SERVER_KEYS.includes(k));
  const unknown = [...unknownTop, ...unknownServer.map((k) => `server.${k}`)];
  if (unknown.length > 0) {
    notices.push(`--from: run.json sets ${unknown.join(', ')}, unknown to this servebench: not applied`);
  }
  if (again.length > 0) {
    notices.push(`--from: secrets are not recorded; give again if the run needs them: ${again.join(', ')}`);
  }
  return { base, notices, fromRun: { id: record.id, path: folder }, recorded, sealed };
}
