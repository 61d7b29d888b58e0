import { describeEngine } from '../../shared/engines.js';
import { randomBytes } from 'node:crypto';
import { cpus, hostname, platform, release, totalmem } from 'node:os';
import type { CapacityResult } from '../../shared/capacity.js';
import type { BenchConfig } from '../../shared/config.js';
import type { RunEvent } from '../../shared/events.js';
import type { PlannedLevel } from '../../shared/run-estimate.js';
import type { LevelResult, RunEnvironment, RunRecord } from '../../shared/run-record.js';
import type { Clock } from '../clock.js';
import { UserError } from '../errors.js';
import { plannedLevel, type LevelPlan } from '../load/level-plan.js';
import { combineChecks } from '../checks/combine.js';
import { runChecks } from '../checks/registry.js';
import { levelTitle } from '../../shared/report-columns.js';
import { renderSummaryCsv } from '../report/registry.js';
import { RUN_FILES, RunWriter, createRunDir } from '../runs/run-store.js';
import { diskErrorOf, type RunFs } from '../runs/run-fs.js';
import type { ServerFailure } from '../servers/types.js';
import { benchSecretValues, redactBenchConfig, redactLine, redactUrl } from '../servers/redact.js';
import { SERVEBENCH_VERSION } from '../version.js';
import type { ActiveRun, ActiveRuns } from './active-runs.js';
import { cancelWords } from './cancel-words.js';
import { RunMessageLog } from './run-messages.js';
import type { ProcReader } from '../telemetry/host-pressure.js';

/** What a run session needs from the host: its clock, events, signal, folder operations and host facts. */
export interface RunSessionOptions {
  clock: Clock;
  now: () => Date;
  emit: (event: RunEvent) => void;
  signal?: AbortSignal;
  runFs?: RunFs;
  env?: NodeJS.ProcessEnv;
  hostInfo?: () => Promise<Partial<RunEnvironment['host']>>;
  fromRun?: RunRecord['fromRun'];
  activeRuns?: ActiveRuns;
  /** Levels the run plans, for progress (a capacity search: the most it can take). */
  totalLevels: number;
  /** Every level the run plans, in order, for the time-left estimate (absent for a capacity search). */
  plannedLevels?: PlannedLevel[];
  /** Capacity searches the run plans: with one, run.json keeps the single `capacity` of older versions. */
  capacitySearches: number;
  /** The run folder to create, instead of a new one under config.out (a distributed worker's shard). */
  dir?: string;
  /** Tags and prompt nonce shared with other processes of the same run (a distributed worker takes rank 0's). */
  runNonce?: number;
  /** Reads the host's CPU pressure files (/proc/pressure/cpu, /proc/self/schedstat); default the real ones. */
  readProc?: ProcReader;
}

/** Where a level's requests and prompts start, and its index in the run's level events. */
export interface LevelSlot {
  levelIndex: number;
  firstId: number;
  firstPromptIndex: number;
}

function basicHost(): RunEnvironment['host'] {
  const cpuList = cpus();
  return {
    hostname: hostname(),
    os: `${platform()} ${release()}`,
    cpu: cpuList[0]?.model,
    cpus: cpuList.length,
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
  };
}

/**
 * One run: its folder, writer and record, the ids and prompt indices its levels draw from, the telemetry lines
 * waiting to be written, and how it ended. Server sessions measure into it; `finish` writes the final record.
 */
export class RunSession {
  readonly record: RunRecord;
  readonly runId: string;
  /** Aborts on the user's cancel or on a write that failed (disk full, read-only). */
  readonly signal: AbortSignal;
  /** Tags every request of this run (the server's logs and caches tell runs apart). */
  readonly runNonce: number;
  readonly tagPrefix: string;
  /** Telemetry samples (JSON lines) not yet appended to the run folder. */
  readonly telemetryLines: string[] = [];
  /** The first server that died; read after it stopped, its failure carries its last log lines. */
  serverFailure: ServerFailure | null = null;
  serversStarted = 0;
  private serverConfigIndex: number | undefined;
  private failure: string | undefined;
  private failureExitCode: number | undefined;
  private nextRequestId = 0;
  private nextPromptIndex = 0;
  private nextLevelIndex = 0;
  private readonly capacities: CapacityResult[] = [];
  private readonly active: ActiveRun;
  private readonly messages = new RunMessageLog([]);
  /** The level slot between its level-started event and its addLevel: the messages said meanwhile belong to it. */
  private currentSlot: number | undefined;

  private constructor(
    readonly config: BenchConfig,
    readonly dir: string,
    readonly writer: RunWriter,
    record: RunRecord,
    private readonly options: RunSessionOptions,
    private readonly secrets: readonly string[],
  ) {
    this.record = record;
    this.runId = record.id;
    this.runNonce = options.runNonce ?? randomBytes(4).readUInt32BE(0) % 1_000_000;
    this.tagPrefix = `sb-${this.runNonce.toString(36)}`;
    // A write that fails (disk full, read-only) stops the run like a cancel; the failure at the end says why.
    this.signal = options.signal ? AbortSignal.any([options.signal, writer.fatalSignal]) : writer.fatalSignal;
    this.active = { record, writer };
  }

  /** Creates the run folder and its first run.json, registers the run as active and emits run-started. */
  static async create(config: BenchConfig, options: RunSessionOptions): Promise<RunSession> {
    const { clock, now } = options;
    const startedAt = now();
    const dir = options.dir ?? (await createRunDir(config.out, config.label, startedAt, options.runFs));
    // Every file of the run is scrubbed of this run's secrets: a server may echo a key in an error message.
    const secrets = benchSecretValues(config, options.env ?? process.env);
    const writer = new RunWriter(dir, { fs: options.runFs, secrets });
    const runId = dir.split('/').pop() as string;
    const simulated = describeEngine(config.server.engine).simulated;
    const hostExtra = options.hostInfo ? await options.hostInfo().catch(() => ({})) : {};
    const record: RunRecord = {
      schemaVersion: 1,
      id: runId,
      label: config.label,
      startedAt: startedAt.toISOString(),
      finishedAt: null,
      status: 'running',
      simulated,
      ...(options.fromRun ? { fromRun: options.fromRun } : {}),
      // Secrets (API key, HF_TOKEN and the like in env or arguments) never reach the record.
      config: redactBenchConfig(config),
      environment: {
        host: { ...basicHost(), ...hostExtra },
        servebenchVersion: SERVEBENCH_VERSION,
        engine: {
          kind: config.server.engine,
          model: config.model ?? config.server.model,
          url: config.server.url === undefined ? undefined : redactUrl(config.server.url),
          simulated,
        },
      },
      clock: {
        originMonoNs: clock.originMonoNs.toString(),
        originWall: new Date(startedAt.getTime() - clock.nowMs()).toISOString(),
      },
      levels: [],
      checks: [],
    };
    await writer.writeRecord(record);
    const session = new RunSession(config, dir, writer, record, options, secrets);
    options.activeRuns?.add(session.active);
    session.emit({
      type: 'run-started',
      runId,
      dir,
      simulated,
      totalLevels: options.totalLevels,
      startedAt: record.startedAt,
      clockOriginWall: record.clock.originWall,
      ...(options.plannedLevels ? { plan: options.plannedLevels } : {}),
    });
    return session;
  }

  /** Sends a progress event to the host; a message is also kept in the record (run.json). */
  emit(event: RunEvent): void {
    if (event.type === 'level-started') {
      this.currentSlot = event.levelIndex;
      this.serverConfigIndex = event.serverConfigIndex;
    } else if (event.type === 'message') this.keepMessage(event);
    // Each phase says when it began on the run clock: the time-left estimate takes a level's pace from there.
    if (event.type === 'phase' && event.atMs === undefined) event = { ...event, atMs: this.options.clock.nowMs() };
    this.options.emit(event);
  }

  /** Marks the start of a server configuration: the messages said from now on belong to it, and to no level yet. */
  enterServerConfig(index: number): void {
    this.serverConfigIndex = index;
    this.currentSlot = undefined;
    const total = this.config.serverVariants?.length ?? 0;
    if (total > 1) this.emit({ type: 'server-config', index, total });
  }

  private keepMessage(event: Extract<RunEvent, { type: 'message' }>): void {
    // Named values (api_key=…) too: the writer blanks only known values and key shapes, and the record is sent as is.
    const text = redactLine(event.text, this.secrets);
    const severalServers = (this.config.serverVariants?.length ?? 0) > 1;
    this.messages.add({
      atMs: this.options.clock.nowMs(),
      severity: event.severity,
      text,
      serverConfigIndex: severalServers ? this.serverConfigIndex : undefined,
      levelSlot: this.currentSlot,
    });
    this.record.messages ??= this.messages.messages;
    if (this.messages.leftOut > 0) this.record.messagesLeftOut = this.messages.leftOut;
  }

  /** How the host's CPU pressure is read (the real /proc unless a test passes its own). */
  get readProc(): ProcReader | undefined {
    return this.options.readProc;
  }

  get clock(): Clock {
    return this.options.clock;
  }

  /** True once the run has a failure to report (the server refused every request, a setting was wrong). */
  get failed(): boolean {
    return this.failure !== undefined;
  }

  /** Reserves a level's index, request ids and prompt indices. */
  takeSlot(plan: LevelPlan): LevelSlot {
    const slot = {
      levelIndex: this.nextLevelIndex++,
      firstId: this.nextRequestId,
      firstPromptIndex: this.nextPromptIndex,
    };
    const { requests } = plannedLevel(plan);
    this.nextRequestId += requests;
    this.nextPromptIndex += requests;
    return slot;
  }

  /** Keeps a measured level (if any), writes pending telemetry and run.json; the level's index in record.levels. */
  async addLevel(slot: LevelSlot, level: LevelResult | null): Promise<number | null> {
    if (level) {
      this.record.levels.push(level);
      this.emit({ type: 'level-finished', levelIndex: slot.levelIndex, level });
    }
    this.messages.settleLevel(slot.levelIndex, level ? this.record.levels.length - 1 : null);
    if (this.currentSlot === slot.levelIndex) this.currentSlot = undefined;
    await this.flushTelemetry();
    await this.writer.writeRecord(this.record);
    return level ? this.record.levels.length - 1 : null;
  }

  /** Records a finished capacity search: one as `capacity` (the shape older versions read), several as `capacities`. */
  async addCapacity(result: CapacityResult): Promise<void> {
    this.capacities.push(result);
    if (this.options.capacitySearches === 1) this.record.capacity = result;
    else this.record.capacities = [...this.capacities];
    await this.writer.writeRecord(this.record);
  }

  /** Appends the telemetry samples gathered since the last write. */
  flushTelemetry(): Promise<void> {
    return this.writer.appendLines(RUN_FILES.telemetry, this.telemetryLines.splice(0));
  }

  /** Ends the run as failed with this reason and exit code (2: the user can fix it). */
  fail(reason: string, exitCode?: number): void {
    this.failure = reason;
    this.failureExitCode = exitCode;
  }

  /** Records why a server session ended with an error, unless the server died or the user cancelled (said elsewhere). */
  failWith(error: unknown): void {
    if (this.serverFailure || this.signal.aborted) return;
    // A file the server needs in the run folder could not be written (disk full): a DiskError, exit 2.
    const cause = diskErrorOf(error) ?? error;
    const message = cause instanceof Error ? cause.message : String(cause);
    if (cause instanceof UserError) this.fail(message, cause.exitCode);
    else this.fail(`internal error: ${message}`);
  }

  /** Settles the status, error and run-level checks, writes run.json and summary.csv, and emits run-finished. */
  async finish(): Promise<{ record: RunRecord; dir: string; failure?: string; exitCode?: number }> {
    const { record, writer } = this;
    if (this.serverFailure) {
      const f = this.serverFailure;
      this.fail(`server died during the run: ${f.message} — ${f.fix}`, this.failureExitCode);
    }
    if (writer.fatal) this.fail(writer.fatal.message, 2);
    const failure = this.failure;
    record.status = failure ? 'failed' : this.signal.aborted ? 'cancelled' : 'completed';
    if (failure) record.error = failure;
    else if (this.signal.aborted)
      record.error = `${cancelWords(this.signal.reason)}; ${record.levels.length > 0 ? 'levels measured so far are kept' : 'before any level was measured'}`;
    record.finishedAt = this.options.now().toISOString();
    record.checks = combineChecks(
      record.levels.map((l) => l.checks),
      record.levels.map((l) => levelTitle(l)),
    );
    record.checks.push(
      ...runChecks({
        serverFailure: this.serverFailure,
        simulated: record.simulated,
        serversStarted: this.serversStarted,
        failure: failure ?? null,
      }),
    );
    await writer.writeRecord(record);
    await writer.writeText(RUN_FILES.summary, await renderSummaryCsv(record));
    await writer.close();
    this.options.activeRuns?.delete(this.active);
    if (writer.fatal) this.fail(writer.failureLine() as string, 2);
    this.emit({ type: 'run-finished', runId: this.runId, dir: this.dir, status: record.status, record });
    const exitCode = this.failure ? (this.failureExitCode ?? 1) : undefined;
    return { record, dir: this.dir, failure: this.failure, exitCode };
  }
}
