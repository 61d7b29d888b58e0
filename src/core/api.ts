import { stat } from 'node:fs/promises';
import { ReplayLog } from './ui-server/replay-log.js';
import { basename, resolve } from 'node:path';
import { BenchConfigSchema } from '../shared/config.js';
import type { BenchConfig } from '../shared/config.js';
import { PICK_FILE_UNAVAILABLE } from '../shared/contract.js';
import type {
  ActiveRun,
  CompareFormat,
  ContractEvent,
  ContractEvents,
  PresetSummary,
  RunComparison,
  RunExport,
  ServebenchContract,
  TextExportFormat,
} from '../shared/contract.js';
import { ActiveRuns, runBenchmark } from './benchmark.js';
import type { BenchmarkDeps, BenchmarkResult } from './benchmark.js';
import type { RunRecord } from '../shared/run-record.js';
import { UserError } from './errors.js';
import { loadRunFolder } from './report/load-run-folder.js';
import { renderComparison } from './report/compare/index.js';
import { findExporter, renderExport } from './report/registry.js';
import { listRuns, type RunsIndexMemo } from './run-folder/list-runs.js';
import { readTelemetry } from './run-folder/read-lines.js';
import { recordSecrets, sanitizeRecord } from './run-folder/redact-folder.js';
import { requestChart, requestPage } from './run-folder/request-view.js';
import { latencyDistribution } from './run-folder/latency-distribution.js';
import { loadRun } from './run-folder/run-json.js';
import { createRunActions, runFolder } from './runs/run-actions.js';
import type { RunActionsOptions } from './runs/run-actions.js';
import { createSettingsStore } from './settings/settings-store.js';
import type { SettingsStore } from './settings/settings-store.js';
import { createEngineDetector } from './servers/engine-detect.js';
import { capacityPlan } from './capacity/plan.js';
import { maxCapacityProbes } from './capacity/search.js';
import { planLevels } from './load/level-plan.js';
import { paceOfRecord, planRun } from './load/run-plan.js';
import { loadWorkload, ownLengths } from './workloads/workload.js';
import type { RunPlan } from '../shared/run-estimate.js';
import type { EngineDetector } from './servers/engine-detect.js';
import { benchSecretValues, redact, redactBenchConfig, redactEvent } from './servers/redact.js';

/** What the service needs from its host (the CLI's `ui` command or Electron's utility process). */
export interface ServiceOptions {
  /** Parent folder of run folders. */
  outDir: string;
  deps: Omit<BenchmarkDeps, 'onEvent' | 'signal'>;
  listPresets?: () => PresetSummary[];
  /** The environment the engines inherit (its token-like secret values are redacted too); default process.env. */
  env?: NodeJS.ProcessEnv;
  /** The app's settings; default: kept in memory only (nothing written). */
  settings?: SettingsStore;
  /** The OS trash and file manager, where the host has them (rename/delete/open of past runs). */
  runHost?: Pick<RunActionsOptions, 'trash' | 'openPath'>;
  /** The form's engine look-up; default one over `env` (60 s per command, answers kept 30 s). */
  engineDetector?: EngineDetector;
}

/** The contract plus event subscription: the one surface a UI uses. */
export interface ServebenchService extends ServebenchContract, ContractEvents {
  /** Resolves when the active run (if any) has finished and its folder is written. */
  idle(): Promise<void>;
  /** For a process that must exit now (a second Ctrl-C): marks the active run cancelled in its run.json, synchronously. */
  saveActiveSync?(reason: string): void;
  /** For a host that is stopping (a signal): cancels the active run, if any, with the host's words, and waits for its folder. */
  stopActive?(reason?: string): Promise<void>;
}

/** The one-run lock: taken synchronously when startRun is called, before anything is awaited. */
interface RunLock {
  label: string;
  run: (ActiveRun & { controller: AbortController }) | null;
  done: Promise<BenchmarkResult | null>;
}

/** Where the one-run lock is held, so the functions that take and read it share it. */
interface RunSlot {
  lock: RunLock | null;
}

// Checked before anything is awaited: a run already going, or a setting out of its bounds, is one line.
function parseRunConfig(input: unknown, outDir: string, lock: RunLock | null): BenchConfig {
  if (lock) {
    const what = lock.run ? `run ${lock.run.runId}` : `run '${lock.label}' (starting)`;
    throw new UserError(`a run is already in progress: ${what} is still going; cancel it or wait for it to finish`);
  }
  const parsed = BenchConfigSchema.safeParse({ ...(input as object), out: outDir });
  if (!parsed.success) {
    // A bound a user crossed (concurrency, lengths...): one line naming the field and the bound.
    const issue = parsed.error.issues[0];
    const field = issue?.path.filter((p) => typeof p !== 'number').join('.') ?? '';
    throw new UserError(`invalid setting${field ? ` '${field}'` : ''}: ${issue?.message ?? 'invalid config'}`);
  }
  return parsed.data;
}

// Takes the lock synchronously and resolves once the run has its folder (run-started); an early failure rejects.
function startLockedRun(
  runs: RunSlot,
  config: BenchConfig,
  options: ServiceOptions,
  env: NodeJS.ProcessEnv,
  activeRuns: ActiveRuns,
  emit: (event: ContractEvent) => void,
): Promise<ActiveRun> {
  const secrets = benchSecretValues(config, env);
  const controller = new AbortController();
  let started: (run: ActiveRun) => void = () => undefined;
  let failedEarly: (error: unknown) => void = () => undefined;
  const startedP = new Promise<ActiveRun>((res, rej) => {
    started = res;
    failedEarly = rej;
  });
  const mine: RunLock = { label: config.label, run: null, done: Promise.resolve(null) };
  runs.lock = mine;
  const release = (): void => {
    if (runs.lock === mine) runs.lock = null;
  };
  mine.done = runBenchmark(config, {
    ...options.deps,
    activeRuns,
    signal: controller.signal,
    onEvent: (raw) => {
      const event = redactEvent(raw, secrets);
      if (event.type === 'run-started') {
        mine.run = { runId: event.runId, dir: event.dir, config, controller };
        started({ runId: event.runId, dir: event.dir, config: redactBenchConfig(config) });
      }
      // run-finished comes after the folder is written and the server stopped: a listener may start the next run.
      if (event.type === 'run-finished') release();
      emit(event);
    },
  })
    .then(
      (result) => result,
      (error: unknown) => {
        release();
        failedEarly(error);
        return null;
      },
    )
    .finally(release);
  return startedP;
}

/** The estimate of a config's run: its levels as runBenchmark plans them, at a recorded run's pace where given. */
async function estimateRun(input: unknown, outDir: string, fromRunId: string | undefined): Promise<RunPlan> {
  const config = parseRunConfig(input, outDir, null);
  const paces = fromRunId ? paceOfRecord((await openReadFolder(outDir, fromRunId)).record.levels) : [];
  if (config.findCapacity) {
    const capacity = capacityPlan(config);
    const perShape = maxCapacityProbes(capacity.start, capacity.max);
    return planRun({ config, plans: [], paces, capacityLevels: capacity.shapes.length * perShape });
  }
  // A prompt file or trace is read as the run would read it: a trace is one level of its own.
  const workload = await loadWorkload(config);
  const plans = workload.kind === 'trace' ? [workload.plan] : planLevels(config);
  return planRun({ config, plans, paces, outputFromFile: ownLengths(workload).output });
}

/**
 * A run folder for a read: its record cleaned of secrets, and the secret values every line it hands on is
 * cleaned of (folders written by older versions may hold some). "not found" for a folder that is not there;
 * one that is there but unreadable says why (loadRun's line).
 */
async function openReadFolder(
  outDir: string,
  runId: string,
): Promise<{ dir: string; raw: RunRecord; record: RunRecord; secrets: string[] }> {
  const dir = runFolder(outDir, runId);
  if (!(await stat(dir).catch(() => null))) throw new UserError(`run ${runId} not found in ${outDir}`);
  const raw = await loadRun(dir);
  const secrets = recordSecrets(raw);
  return { dir, raw, record: sanitizeRecord(raw, secrets), secrets };
}

async function exportRunText(
  outDir: string,
  activeRunId: string | undefined,
  runId: string,
  format: TextExportFormat,
): Promise<RunExport> {
  if (activeRunId === runId) throw new UserError(`run ${runId} is still going: export it once it has finished`);
  const exporter = findExporter(format);
  if (!exporter || exporter.binary)
    throw new UserError(`cannot export ${format}: choose html, md, csv, json or vllm-json`);
  const text = (await renderExport(exporter, await loadRunFolder(runFolder(outDir, runId)))) as string;
  return { format, fileName: `${runId}${exporter.extension}`, mediaType: exporter.mediaType, text };
}

async function compareRunFolders(
  outDir: string,
  activeRunId: string | undefined,
  runIds: string[],
  format: CompareFormat,
): Promise<RunComparison> {
  if (new Set(runIds).size !== runIds.length) throw new UserError('pick each run once to compare them');
  const going = runIds.find((id) => id === activeRunId);
  if (going) throw new UserError(`run ${going} is still going: compare it once it has finished`);
  const dirs = runIds.map((id) => runFolder(outDir, id));
  for (const [i, dir] of dirs.entries()) {
    if (!(await stat(dir).catch(() => null))) throw new UserError(`run ${runIds[i]} not found in ${outDir}`);
  }
  const result = await renderComparison(dirs, format);
  const name = runIds.length === 2 ? runIds.join('-vs-') : `${runIds[0]}-and-${runIds.length - 1}-more`;
  return {
    format,
    fileName: `compare-${name}.${format}`,
    mediaType: format === 'html' ? 'text/html' : 'text/markdown',
    text: result.text,
    series: result.series,
    levels: result.levels,
  };
}

/** The reads of a run folder's files, each cleaned of the run's secrets. */
function folderReads(
  openFolder: (runId: string) => ReturnType<typeof openReadFolder>,
): Pick<ServebenchContract, 'getRequests' | 'getRequestChart' | 'getTelemetry' | 'getLatencyDistribution'> {
  return {
    async getRequests(runId, window) {
      const { dir, secrets } = await openFolder(runId);
      return requestPage(dir, secrets, window);
    },
    async getRequestChart(runId, window, columns) {
      const { dir, raw, secrets } = await openFolder(runId);
      return requestChart(dir, raw, secrets, window, columns);
    },
    getLatencyDistribution: (runId) =>
      openFolder(runId).then(({ dir, raw, secrets }) => latencyDistribution(dir, raw, secrets)),
    async getTelemetry(runId) {
      const { dir, secrets } = await openFolder(runId);
      const { gpu, engine, client } = await readTelemetry(dir, secrets);
      return { gpu, engine, client };
    },
  };
}

/**
 * Creates the service over the benchmark engine: one run at a time, progress pushed as events, and
 * nothing secret in any answer or event (configs, records and log lines are redacted here).
 */
export function createServebenchService(options: ServiceOptions): ServebenchService {
  const listeners = new Set<(event: ContractEvent) => void>();
  const runs: RunSlot = { lock: null };
  const activeRuns = new ActiveRuns();
  const replay = new ReplayLog();
  const outDir = resolve(options.outDir);
  const env = options.env ?? process.env;
  const settings = options.settings ?? createSettingsStore();
  const detector = options.engineDetector ?? createEngineDetector({ env });
  const runActions = createRunActions({
    outDir,
    ...options.runHost,
    activeRunId: async () => runs.lock?.run?.runId ?? null,
  });

  const runsIndex: RunsIndexMemo = {};
  const openFolder = (runId: string) => openReadFolder(outDir, runId);
  const emit = (event: ContractEvent): void => {
    replay.add(event);
    for (const l of listeners) {
      try {
        l(event);
      } catch {
        // One broken client must not stop the run or the other clients.
      }
    }
  };

  return {
    subscribe(listener, subscribeOptions) {
      if (subscribeOptions?.replay) for (const event of replay.all) listener(event);
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async startRun(input) {
      // No await before the lock is taken: two calls sent together (two tabs, a double click) get one run.
      return startLockedRun(runs, parseRunConfig(input, outDir, runs.lock), options, env, activeRuns, emit);
    },
    async cancelRun(runId) {
      const lock = runs.lock;
      const run = lock?.run;
      if (!lock || !run || run.runId !== runId) throw new UserError(`run ${runId} is not running`);
      run.controller.abort();
      await lock.done;
    },
    async activeRun() {
      const run = runs.lock?.run;
      return run ? { runId: run.runId, dir: run.dir, config: redactBenchConfig(run.config) } : null;
    },
    async listRuns() {
      return (await listRuns(outDir, { memo: runsIndex })).map((r) => ({ ...r, id: basename(r.dir) }));
    },
    async getRun(runId) {
      const { record } = await openFolder(runId);
      return record;
    },
    ...folderReads(openFolder),
    async listPresets() {
      return (options.listPresets?.() ?? []).map((p) => (p.server ? { ...p, server: redact(p.server) } : p));
    },
    exportRun: (runId, format) => exportRunText(outDir, runs.lock?.run?.runId, runId, format),
    compareRuns: (runIds, format) => compareRunFolders(outDir, runs.lock?.run?.runId, runIds, format),
    probeEngine: (request) => detector.detect(request),
    planRun: (input, fromRunId) => estimateRun(input, outDir, fromRunId),
    async liveEvents() {
      return [...replay.all];
    },
    getSettings: () => settings.getSettings(),
    saveSettings: (input) => settings.saveSettings(input),
    renameRun: (runId, label) => runActions.renameRun(runId, label),
    deleteRun: (runId) => runActions.deleteRun(runId),
    openRunFolder: (runId) => runActions.openRunFolder(runId),
    // The core has no dialog: the desktop app answers pickFile in main; a browser types the path.
    async pickFile() {
      throw new UserError(PICK_FILE_UNAVAILABLE);
    },
    async idle() {
      await runs.lock?.done;
    },
    saveActiveSync(reason) {
      activeRuns.saveSync(reason);
    },
    async stopActive(reason) {
      runs.lock?.run?.controller.abort(reason);
      await runs.lock?.done;
    },
  };
}
