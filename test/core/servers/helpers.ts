import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ServerConfigSchema, type ServerConfig } from '../../../src/shared/config.js';
import type { RunEvent } from '../../../src/shared/events.js';
import { isProcessAlive } from '../../../src/core/servers/process-group.js';
import type { ServerConfigInput } from '../../../src/core/servers/presets.js';
import type { ProgressPattern } from '../../../src/core/servers/engines/index.js';
import { createServerManager, type ServerManager } from '../../../src/core/servers/manager.js';
import { ServerStartError } from '../../../src/core/servers/server-errors.js';
import type { RunningServer } from '../../../src/core/servers/types.js';

export const FAKE_PYTHON = fileURLToPath(new URL('../../fakes/python-fake.mjs', import.meta.url));
export const FAKE_SIM_CLI = fileURLToPath(new URL('../../fakes/engine-sim-cli.mjs', import.meta.url));

export interface RecordEntry {
  kind: 'probe' | 'help' | 'engine' | 'worker' | 'sim';
  pid: number;
  argv?: string[];
  mode?: string;
}

/** A fresh run folder and the record file the fakes append to. */
export async function makeRun(): Promise<{ runDir: string; recordFile: string }> {
  const runDir = await mkdtemp(join(tmpdir(), 'servebench-servers-'));
  return { runDir, recordFile: join(runDir, 'fake-record.jsonl') };
}

export function readRecord(file: string): RecordEntry[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as RecordEntry);
}

/** Pids of every long-lived process the fakes started (engines and their workers). */
export function launchedPids(file: string): number[] {
  return readRecord(file)
    .filter((e) => e.kind === 'engine' || e.kind === 'worker' || e.kind === 'sim')
    .map((e) => e.pid);
}

export function alivePids(pids: number[]): number[] {
  return pids.filter((pid) => isProcessAlive(pid));
}

/** A fake-python server config for an engine. */
export function fakeConfig(
  engine: 'vllm' | 'sglang',
  recordFile: string,
  mode: string,
  extra: Partial<ServerConfigInput> & { fakeEnv?: Record<string, string> } = {},
): ServerConfig {
  const { fakeEnv, ...rest } = extra;
  return ServerConfigSchema.parse({
    engine,
    python: FAKE_PYTHON,
    model: 'meta-llama/Llama-3.1-8B-Instruct',
    ...rest,
    env: { FAKE_ENGINE_MODE: mode, FAKE_ENGINE_RECORD: recordFile, ...fakeEnv, ...(rest.env ?? {}) },
  });
}

/** Collects events; `waitFor` resolves on the first event matching a predicate (past or future). */
export function eventLog(): {
  events: RunEvent[];
  onEvent: (e: RunEvent) => void;
  waitFor: (pred: (e: RunEvent) => boolean) => Promise<RunEvent>;
} {
  const events: RunEvent[] = [];
  const waiters: Array<{ pred: (e: RunEvent) => boolean; resolve: (e: RunEvent) => void }> = [];
  return {
    events,
    onEvent: (e) => {
      events.push(e);
      for (const w of [...waiters]) {
        if (w.pred(e)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(e);
        }
      }
    },
    waitFor: (pred) =>
      new Promise((resolve) => {
        const found = events.find(pred);
        if (found) resolve(found);
        else waiters.push({ pred, resolve });
      }),
  };
}

/** The first start-up milestone a log line matches: its key and value. */
export function progress(patterns: ProgressPattern[], line: string): { key: string; value?: number } | undefined {
  for (const p of patterns) {
    const m = line.match(p.pattern);
    if (m) return { key: p.key, value: p.value?.(m) };
  }
  return undefined;
}

/** Server managers with test grace periods, all stopped by `stopAll` (call it in afterEach). */
export function managerPool(pollMs = 20): { manager: () => ServerManager; stopAll: () => Promise<void> } {
  const made: ServerManager[] = [];
  return {
    manager: () => {
      const m = createServerManager({ pollMs, grace: { interruptMs: 5_000, terminateMs: 5_000, killMs: 5_000 } });
      made.push(m);
      return m;
    },
    stopAll: async () => {
      await Promise.all(made.splice(0).map((m) => m.stopAll()));
    },
  };
}

/** Configs of an engine whose interpreter is a stand-in under test/fakes, each recording to its `recordFile`. */
export function standIn(
  engine: string,
  script: string,
  model: string,
): (recordFile: string, extra?: Record<string, unknown>, mode?: string) => ServerConfig {
  const python = fileURLToPath(new URL(`../../fakes/${script}`, import.meta.url));
  return (recordFile, extra = {}, mode = 'ok') =>
    ServerConfigSchema.parse({
      engine,
      python,
      model,
      ...extra,
      env: { FAKE_ENGINE_MODE: mode, FAKE_ENGINE_RECORD: recordFile },
    });
}

/** The start error a failing start rejects with. */
export async function startError(start: Promise<RunningServer>): Promise<ServerStartError> {
  const error = await start.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof ServerStartError)) throw new Error(`expected a ServerStartError, got ${String(error)}`);
  return error;
}
