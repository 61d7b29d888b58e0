import { createHash } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { BenchConfig } from '../../shared/config.js';
import { ServerConfigSchema } from '../../shared/config.js';
import type { WorkerLevelReport } from '../../shared/distributed.js';
import type { LevelResult } from '../../shared/run-record.js';
import type { RequestRecord } from '../../shared/request-record.js';
import type { BenchmarkDeps, BenchmarkResult } from '../benchmark.js';
import { createMonoClock } from '../clock.js';
import type { LevelPlan } from '../load/level-plan.js';
import { summarizeLevelRun, type LevelMeasureInput } from '../run/level-measure.js';
import { RunSession } from '../run/run-session.js';
import { ServerSession } from '../run/server-session.js';
import { redactBenchConfig } from '../servers/redact.js';
import { SERVEBENCH_VERSION } from '../version.js';
import { loadWorkload, type Workload } from '../workloads/workload.js';
import { measureOffset, type ClockOffset } from './clock-sync.js';
import type { DistributedIdentity } from './environment.js';
import { RECORDS_PER_FRAME, batchKey } from './protocol.js';
import { shardDir } from './rank0.js';
import { levelCut, runShare, shareReport, startAt } from './share-level.js';
import { CoordinatorLostError, WorkerLink, type WorkerCommand } from './worker-link.js';

/** What a worker needs besides the benchmark's own collaborators. */
export interface WorkerOptions {
  identity: DistributedIdentity;
  /** How long to wait for rank 0 to come up. */
  connectTimeoutMs: number;
  token?: string;
}

/**
 * The settings every process of a run must share, as one digest: the recorded (redacted) configuration. A worker
 * whose digest differs from rank 0's is refused, so no level is ever split between two different benchmarks.
 */
export function configDigest(config: BenchConfig): string {
  return createHash('sha256')
    .update(JSON.stringify(redactBenchConfig(config)))
    .digest('hex')
    .slice(0, 16);
}

type LevelCommand = Extract<WorkerCommand, { type: 'level' }>;

/**
 * A worker's start of a batch: arrive at rank 0's barrier, then wait for its instant on this clock; how late it began.
 * Rank 0 lost at the barrier resolves too (0): the level's cut has fired, and the level ends with what it measured.
 */
export async function barrierStart(
  arrive: () => Promise<number>,
  input: LevelMeasureInput,
  offsetMs: number,
  signal: AbortSignal,
): Promise<number> {
  try {
    return await startAt(input, await arrive(), offsetMs, signal);
  } catch {
    return 0;
  }
}

/** A worker's levels: each is rank 0's, its share is run at rank 0's instants and its records go back as they finish. */
class WorkerLevels {
  pending: LevelCommand | null = null;
  readonly reports: WorkerLevelReport[] = [];

  constructor(
    private readonly link: WorkerLink,
    private readonly identity: DistributedIdentity,
    private readonly run: RunSession,
  ) {}

  private async offset(levelIndex: number, when: 'before' | 'after'): Promise<ClockOffset | null> {
    const offset = await measureOffset(() => this.link.ping()).catch(() => null);
    if (offset) this.link.send({ type: 'offset', levelIndex, when, offset });
    return offset;
  }

  async measure(input: LevelMeasureInput): Promise<LevelResult | null> {
    const cmd = this.pending;
    this.pending = null;
    const { rank, worldSize, host } = this.identity;
    if (
      !cmd ||
      cmd.levelIndex !== input.levelIndex ||
      cmd.firstId !== input.firstId ||
      cmd.firstPromptIndex !== input.firstPromptIndex
    ) {
      input.stopRun(
        "this worker's levels disagree with rank 0's: run the same servebench version and settings everywhere",
        1,
      );
      return null;
    }
    const cut = levelCut(input);
    const onAbort = (reason: string): void => cut.cut(reason, true);
    const unsubscribe = this.link.onAbort(onAbort);
    const before = await this.offset(input.levelIndex, 'before');
    const send = (records: RequestRecord[]): void => {
      for (let i = 0; i < records.length; i += RECORDS_PER_FRAME)
        this.link.send({
          type: 'records',
          levelIndex: input.levelIndex,
          records: records.slice(i, i + RECORDS_PER_FRAME) as never,
        });
    };
    const done = await runShare(
      input,
      rank,
      worldSize,
      {
        // Rank 0 lost at a barrier: the cut has fired (onAbort) and the level ends with what it measured.
        batch: async (b, signal) => {
          try {
            return await startAt(
              input,
              await this.link.arrive(batchKey(input.levelIndex, b)),
              before?.offsetMs ?? 0,
              signal,
            );
          } catch {
            return 0;
          }
        },
        onBatch: send,
      },
      cut.signal,
    );
    unsubscribe();
    const after = this.link.lost ? null : await this.offset(input.levelIndex, 'after');
    const report = shareReport(
      input,
      done,
      host,
      rank,
      { offsetBefore: before, offsetAfter: after },
      cut.reason()?.message,
    );
    this.link.send({ type: 'done', report });
    this.reports.push(report);
    this.run.record.distributed!.levels = this.reports;
    if (this.link.lost) {
      input.stopRun(
        `${this.link.lost.message}; this worker's records are in ${this.run.dir} (servebench merge combines shard folders)`,
        1,
      );
    }
    return done.run ? summarizeLevelRun({ ...input, plan: done.share.plan }, done.run) : null;
  }
}

/** The server a worker measures: the one rank 0 announced, attached to as it is. */
function attachConfig(baseUrl: string, model: string): ReturnType<typeof ServerConfigSchema.parse> {
  return ServerConfigSchema.parse({ engine: 'attach', url: baseUrl, model });
}

/** Follows rank 0's commands until the run ends: server sessions against its server, and each level's share. */
async function followRank0(
  link: WorkerLink,
  run: RunSession,
  levels: WorkerLevels,
  workload: Workload,
  deps: BenchmarkDeps,
): Promise<void> {
  let session: ServerSession | null = null;
  try {
    for (;;) {
      if (run.signal.aborted || session?.clientStopped) return;
      const cmd = await link.next();
      if (cmd.type === 'end') return;
      if (cmd.type === 'server') {
        await session?.close();
        session = new ServerSession(run, {
          serverConfig: attachConfig(cmd.baseUrl, cmd.model),
          index: cmd.index,
          variant: cmd.variant,
          plans: cmd.plans as LevelPlan[],
          workload,
          startServer: deps.startServer,
          measure: (input) => levels.measure(input),
        });
        await session.start();
        continue;
      }
      if (!session) throw new Error('rank 0 sent a level before a server');
      levels.pending = cmd;
      await session.runLevel(cmd.plan as LevelPlan);
    }
  } finally {
    await session?.close();
  }
}

/**
 * A worker of a distributed run (rank > 0): joins rank 0, writes its own shard folder (its raw records on its own
 * clock, and its account of each level) and runs its share of every level rank 0 announces. Rank 0 lost: it stops
 * its requests, keeps its shard and fails with the reason.
 */
export async function runWorker(
  config: BenchConfig,
  deps: BenchmarkDeps,
  options: WorkerOptions,
): Promise<BenchmarkResult> {
  const { identity } = options;
  const clock = deps.clock ?? createMonoClock();
  // The same checks as rank 0's, before anything is joined: a bad setting fails every task alike.
  const workload = await loadWorkload(config);
  const link = await WorkerLink.connect({
    host: identity.coordinator.host,
    port: identity.coordinator.port,
    clock,
    connectTimeoutMs: options.connectTimeoutMs,
    signal: deps.signal,
    hello: {
      version: SERVEBENCH_VERSION,
      rank: identity.rank,
      worldSize: identity.worldSize,
      configDigest: configDigest(config),
      host: identity.host,
      pid: process.pid,
      ...(options.token ? { token: options.token } : {}),
    },
  });
  const dir = shardDir(resolve(config.out, link.welcome.runId), identity.rank);
  await mkdir(dir, { recursive: true });
  const run = await RunSession.create(config, {
    clock,
    now: deps.now ?? (() => new Date()),
    emit: (event) => deps.onEvent?.(event),
    signal: deps.signal,
    runFs: deps.runFs,
    env: deps.env,
    hostInfo: deps.hostInfo,
    activeRuns: deps.activeRuns,
    totalLevels: 0,
    capacitySearches: 0,
    dir,
    runNonce: link.welcome.runNonce,
  });
  run.record.distributed = {
    role: 'shard',
    worldSize: identity.worldSize,
    coordinator: link.coordinator,
    launcher: identity.launcher,
    workers: [{ rank: identity.rank, host: identity.host, pid: process.pid }],
    rank: identity.rank,
    runId: link.welcome.runId,
    levels: [],
  };
  const levels = new WorkerLevels(link, identity, run);
  try {
    await followRank0(link, run, levels, workload, deps);
  } catch (error) {
    if (error instanceof CoordinatorLostError) run.fail(`${error.message}; this worker's records are in ${run.dir}`, 1);
    else {
      run.failWith(error);
      const reason = error instanceof Error ? error.message : String(error);
      link.send({ type: 'fail', reason, exitCode: 1 });
    }
  }
  const result = await run.finish();
  link.close(run.signal.aborted ? 'it was cancelled (a signal: the launcher stopped this task)' : result.failure);
  return result;
}
