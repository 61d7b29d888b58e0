import type { ServebenchService } from '../../src/core/api.js';
import { UserError } from '../../src/core/errors.js';
import type {
  ActiveRun,
  CompareFormat,
  ContractEvent,
  EngineDetection,
  EngineProbeRequest,
  PickFileRequest,
  PickedFile,
  PresetSummary,
  RequestChart,
  RequestPage,
  RunComparison,
  RunExport,
  RunTelemetry,
  TimeWindow,
  RunSummary,
  TextExportFormat,
} from '../../src/shared/contract.js';
import { PICK_FILE_UNAVAILABLE } from '../../src/shared/contract.js';
import type { RunRecord } from '../../src/shared/run-record.js';
import { BenchConfigSchema } from '../../src/shared/config.js';
import { planLevels } from '../../src/core/load/level-plan.js';
import { paceOfRecord, planRun } from '../../src/core/load/run-plan.js';
import type { RunPlan } from '../../src/shared/run-estimate.js';
import type { LatencyDistribution } from '../../src/shared/latency-bins.js';
import { createSettingsStore } from '../../src/core/settings/settings-store.js';
import type { AppSettings, SettingsAnswer } from '../../src/shared/settings.js';

/** A service with no engine behind it: records calls, emits what a test tells it to, one run at a time. */
export class FakeService implements ServebenchService {
  readonly calls: Array<{ method: string; args: unknown[] }> = [];
  readonly listeners = new Set<(event: ContractEvent) => void>();
  active: ActiveRun | null = null;
  runs: RunSummary[] = [];
  presets: PresetSummary[] = [{ name: 'sim-demo', description: 'the simulator' }];
  cancelled: string[] = [];
  /** Resolves the active run's completion (set by startRun). */
  private finish: (() => void) | null = null;
  private done: Promise<void> = Promise.resolve();

  /** The active run's events so far, as the real service keeps them for views that open mid-run. */
  replay: ContractEvent[] = [];

  emit(event: ContractEvent): void {
    if (event.type === 'run-started') this.replay = [event];
    else if (event.type === 'run-finished') this.replay = [];
    else this.replay.push(event);
    for (const l of this.listeners) l(event);
  }
  subscribe(listener: (event: ContractEvent) => void, options?: { replay?: boolean }): () => void {
    if (options?.replay) for (const event of this.replay) listener(event);
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  async startRun(config: Parameters<ServebenchService['startRun']>[0]): Promise<ActiveRun> {
    this.calls.push({ method: 'startRun', args: [config] });
    if (this.active) throw new UserError(`run ${this.active.runId} is still going; cancel it or wait for it to finish`);
    const parsed = BenchConfigSchema.parse(config);
    this.active = { runId: 'r1', dir: '/tmp/r1', config: parsed };
    this.done = new Promise((resolve) => {
      this.finish = resolve;
    });
    this.emit({
      type: 'run-started',
      runId: 'r1',
      dir: '/tmp/r1',
      simulated: true,
      totalLevels: parsed.concurrency.length,
    });
    return this.active;
  }
  async cancelRun(runId: string): Promise<void> {
    this.calls.push({ method: 'cancelRun', args: [runId] });
    if (!this.active || this.active.runId !== runId) throw new UserError(`run ${runId} is not running`);
    this.cancelled.push(runId);
    this.active = null;
    this.finish?.();
  }
  async activeRun(): Promise<ActiveRun | null> {
    this.calls.push({ method: 'activeRun', args: [] });
    return this.active;
  }
  async listRuns(): Promise<RunSummary[]> {
    this.calls.push({ method: 'listRuns', args: [] });
    return this.runs;
  }
  async getRun(runId: string): Promise<RunRecord> {
    this.calls.push({ method: 'getRun', args: [runId] });
    throw new UserError(`run ${runId} not found`);
  }
  async getRequests(runId: string, window?: TimeWindow): Promise<RequestPage> {
    this.calls.push({ method: 'getRequests', args: window ? [runId, window] : [runId] });
    return { requests: [], total: 0, truncated: false, window: window ?? null, notes: [] };
  }
  async getRequestChart(runId: string, window?: TimeWindow, columns?: number): Promise<RequestChart> {
    this.calls.push({
      method: 'getRequestChart',
      args: [runId, ...(window ? [window] : []), ...(columns ? [columns] : [])],
    });
    return { ttft: [], e2e: [], requests: 0, columns: columns ?? 1600, window: window ?? null, notes: [] };
  }
  async getTelemetry(runId: string): Promise<RunTelemetry> {
    this.calls.push({ method: 'getTelemetry', args: [runId] });
    return { gpu: [], engine: [] };
  }
  async listPresets(): Promise<PresetSummary[]> {
    this.calls.push({ method: 'listPresets', args: [] });
    return this.presets;
  }
  async exportRun(runId: string, format: TextExportFormat): Promise<RunExport> {
    this.calls.push({ method: 'exportRun', args: [runId, format] });
    return { format, fileName: `${runId}.${format}`, mediaType: 'text/plain', text: `export of ${runId}` };
  }
  async compareRuns(runIds: string[], format: CompareFormat): Promise<RunComparison> {
    this.calls.push({ method: 'compareRuns', args: [runIds, format] });
    const text = `comparison of ${runIds.join(', ')}`;
    return { format, fileName: `compare.${format}`, mediaType: 'text/plain', text, series: runIds.length, levels: 1 };
  }
  /** The real plan of the config (no workload file is read), at a recorded run's pace where one is given. */
  async planRun(config: Parameters<ServebenchService['planRun']>[0], fromRunId?: string): Promise<RunPlan> {
    this.calls.push({ method: 'planRun', args: fromRunId ? [config, fromRunId] : [config] });
    const parsed = BenchConfigSchema.parse({ ...config, out: '/tmp' });
    const paces = fromRunId ? paceOfRecord((await this.getRun(fromRunId)).levels) : [];
    return planRun({ config: parsed, plans: planLevels(parsed), paces });
  }
  async getLatencyDistribution(runId: string): Promise<LatencyDistribution> {
    this.calls.push({ method: 'getLatencyDistribution', args: [runId] });
    return { levels: [], notes: [] };
  }
  async probeEngine(request: EngineProbeRequest): Promise<EngineDetection> {
    this.calls.push({ method: 'probeEngine', args: [request] });
    return { engine: request.engine, name: request.engine, probed: false, found: true };
  }
  async liveEvents(): Promise<ContractEvent[]> {
    this.calls.push({ method: 'liveEvents', args: [] });
    return [...this.replay];
  }
  private readonly settings = createSettingsStore();
  async getSettings(): Promise<SettingsAnswer> {
    this.calls.push({ method: 'getSettings', args: [] });
    return this.settings.getSettings();
  }
  async saveSettings(settings: AppSettings): Promise<SettingsAnswer> {
    this.calls.push({ method: 'saveSettings', args: [settings] });
    return this.settings.saveSettings(settings);
  }
  async renameRun(runId: string, label: string): Promise<void> {
    this.calls.push({ method: 'renameRun', args: [runId, label] });
    const run = this.runs.find((r) => r.id === runId);
    if (!run) throw new UserError(`run ${runId} not found`);
    run.label = label;
  }
  async deleteRun(runId: string): Promise<{ movedTo: string | null }> {
    this.calls.push({ method: 'deleteRun', args: [runId] });
    this.runs = this.runs.filter((r) => r.id !== runId);
    return { movedTo: `/tmp/.trash/${runId}` };
  }
  async openRunFolder(runId: string): Promise<{ path: string; opened: boolean }> {
    this.calls.push({ method: 'openRunFolder', args: [runId] });
    return { path: `/tmp/${runId}`, opened: false };
  }
  async pickFile(request: PickFileRequest): Promise<PickedFile> {
    this.calls.push({ method: 'pickFile', args: [request] });
    throw new UserError(PICK_FILE_UNAVAILABLE);
  }
  idle(): Promise<void> {
    return this.done;
  }
}
