import { basename, join, resolve } from 'node:path';
import { BenchConfigSchema } from '../shared/config.js';
import type { ActiveRun, ContractEvent, PresetSummary, ServebenchContract } from '../shared/contract.js';
import { runBenchmark, saveActiveRunsSync } from './benchmark.js';
import type { BenchmarkDeps, BenchmarkResult } from './benchmark.js';
import { UserError } from './errors.js';
import { listRuns, loadRequests, loadRun, loadTelemetry } from './runs/run-store.js';

/** What the service needs from its host (the CLI's `ui` command or Electron's utility process). */
export interface ServiceOptions {
  /** Parent folder of run folders. */
  outDir: string;
  deps: Omit<BenchmarkDeps, 'onEvent' | 'signal'>;
  listPresets?: () => PresetSummary[];
}

/** The contract plus event subscription: the one surface a UI uses. */
export interface ServebenchService extends ServebenchContract {
  subscribe(listener: (event: ContractEvent) => void): () => void;
  /** Resolves when the active run (if any) has finished and its folder is written. */
  idle(): Promise<void>;
  /** For a process that must exit now (a second Ctrl-C): marks the active run cancelled in its run.json, synchronously. */
  saveActiveSync?(reason: string): void;
}

/** Creates the service over the benchmark engine: one run at a time, progress pushed as events. */
export function createServebenchService(options: ServiceOptions): ServebenchService {
  const listeners = new Set<(event: ContractEvent) => void>();
  let active: (ActiveRun & { controller: AbortController; done: Promise<BenchmarkResult | null> }) | null = null;
  const outDir = resolve(options.outDir);

  const runDir = (runId: string): string => {
    // Ids are folder names; refuse anything that could walk out of the runs folder.
    if (basename(runId) !== runId || runId.startsWith('.')) throw new UserError(`invalid run id '${runId}'`);
    return join(outDir, runId);
  };
  const emit = (event: ContractEvent): void => {
    for (const l of listeners) l(event);
  };

  return {
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async startRun(input) {
      if (active) throw new UserError(`run ${active.runId} is still going; cancel it or wait for it to finish`);
      const parsed = BenchConfigSchema.safeParse({ ...input, out: outDir });
      if (!parsed.success) {
        // A bound a user crossed (concurrency, lengths...): one line naming the field and the bound.
        const issue = parsed.error.issues[0];
        const field = issue?.path.filter((p) => typeof p !== 'number').join('.') ?? '';
        throw new UserError(`invalid setting${field ? ` '${field}'` : ''}: ${issue?.message ?? 'invalid config'}`);
      }
      const config = parsed.data;
      const controller = new AbortController();
      let started: (run: ActiveRun) => void = () => undefined;
      let failedEarly: (error: unknown) => void = () => undefined;
      const startedP = new Promise<ActiveRun>((res, rej) => {
        started = res;
        failedEarly = rej;
      });
      const done = runBenchmark(config, {
        ...options.deps,
        signal: controller.signal,
        onEvent: (event) => {
          if (event.type === 'run-started') {
            active = { runId: event.runId, dir: event.dir, config, controller, done };
            started({ runId: event.runId, dir: event.dir, config });
          }
          emit(event);
        },
      })
        .then(
          (result) => result,
          (error: unknown) => {
            failedEarly(error);
            return null;
          },
        )
        .finally(() => {
          active = null;
        });
      return startedP;
    },
    async cancelRun(runId) {
      if (!active || active.runId !== runId) throw new UserError(`run ${runId} is not running`);
      active.controller.abort();
      await active.done;
    },
    async activeRun() {
      return active ? { runId: active.runId, dir: active.dir, config: active.config } : null;
    },
    async listRuns() {
      return (await listRuns(outDir)).map((r) => ({ ...r, id: basename(r.dir) }));
    },
    async getRun(runId) {
      try {
        return await loadRun(runDir(runId));
      } catch (error) {
        if (error instanceof UserError) throw error;
        throw new UserError(`run ${runId} not found in ${outDir}`);
      }
    },
    async getRequests(runId) {
      return loadRequests(runDir(runId));
    },
    async getTelemetry(runId) {
      return loadTelemetry(runDir(runId));
    },
    async listPresets() {
      return options.listPresets?.() ?? [];
    },
    async idle() {
      await active?.done;
    },
    saveActiveSync(reason) {
      saveActiveRunsSync(reason);
    },
  };
}
