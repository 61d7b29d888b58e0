import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { WorkerLevelReport } from '../../shared/distributed.js';
import type { RequestRecord } from '../../shared/request-record.js';
import type { LevelResult, RunRecord, ServerVariant } from '../../shared/run-record.js';
import type { LevelPlan } from '../load/level-plan.js';
import { RunWriter } from '../runs/run-store.js';
import { benchSecretValues } from '../servers/redact.js';
import { levelAccumulator } from '../metrics/level-accumulator.js';
import { announceLevel, coolDown, summarizeLevelRun, type LevelMeasureInput } from '../run/level-measure.js';
import type { RunSession } from '../run/run-session.js';
import { addWorkerView } from './checks.js';
import type { Coordinator } from './coordinator.js';
import { WorkerLostError, workerName } from './coordinator.js';
import type { DistributedIdentity } from './environment.js';
import type { DistributedHooks } from './hooks.js';
import { mergeParts, type WorkerPart } from './merge.js';
import { batchKey, wirePlan } from './protocol.js';
import { levelCut, runShare, shareReport, startAt } from './share-level.js';
import { checkSplit } from './split.js';

/** How long rank 0 waits for the workers' records after a level was cut short (they are cancelling). */
const AFTER_CUT_MS = 30_000;

/** The shard folder of a rank inside the merged run's folder (workers keep the same path on their own disks). */
export function shardDir(runDir: string, rank: number): string {
  return join(runDir, 'shards', `rank-${rank}`);
}

/** A server URL the workers can reach: a server bound to every interface is reached at rank 0's host. */
function reachableUrl(baseUrl: string, coordinatorHost: string): string {
  try {
    const url = new URL(baseUrl);
    if (url.hostname === '0.0.0.0' || url.hostname === '[::]') url.hostname = coordinatorHost;
    return url.toString().replace(/\/$/, '');
  } catch {
    return baseUrl;
  }
}

/**
 * Rank 0 of a distributed run: hosts the rendezvous, tells the workers each server and level, runs its own share,
 * then merges every worker's raw records onto its clock and summarizes the level as one. Its own records also go to
 * its shard folder, like every worker's.
 */
export class Rank0 implements DistributedHooks {
  private run: RunSession | null = null;
  private shard: RunWriter | null = null;
  private readonly reports: WorkerLevelReport[] = [];
  private onLost: ((message: string) => void) | null = null;
  private onFail: ((reason: string, exitCode: number | undefined) => void) | null = null;

  constructor(
    readonly coordinator: Coordinator,
    private readonly identity: DistributedIdentity,
  ) {
    coordinator.onLost((peer) => this.onLost?.(`${workerName(peer.rank, peer.host)} was lost: ${peer.lost}`));
    coordinator.onFail((reason, exitCode) => this.onFail?.(reason, exitCode));
  }

  async begin(run: RunSession): Promise<void> {
    this.run = run;
    const { worldSize, coordinator, launcher, host } = this.identity;
    run.record.distributed = {
      role: 'merged',
      worldSize,
      coordinator: `${coordinator.host}:${coordinator.port}`,
      launcher,
      workers: [{ rank: 0, host, pid: process.pid }],
    };
    const dir = shardDir(run.dir, 0);
    await mkdir(dir, { recursive: true });
    this.shard = new RunWriter(dir, { secrets: benchSecretValues(run.config, process.env) });
    // A worker's failure before the first level (its server session cannot start) stops the run.
    this.onFail = (reason, exitCode) => run.fail(reason, exitCode ?? 1);
    await this.coordinator.waitForWorkers(run.signal);
    this.coordinator.broadcast({ type: 'welcome', runId: run.runId, runNonce: run.runNonce, tagPrefix: run.tagPrefix });
    for (const p of [...this.coordinator.peers.values()].sort((a, b) => a.rank - b.rank))
      run.record.distributed.workers.push({ rank: p.rank, host: p.host, pid: p.pid });
    await run.writer.writeRecord(run.record);
  }

  serverReady(
    index: number,
    server: { baseUrl: string; model: string },
    plans: LevelPlan[],
    variant?: ServerVariant,
  ): void {
    checkSplit(plans, this.identity.worldSize);
    const baseUrl = reachableUrl(server.baseUrl, this.identity.coordinator.host);
    this.coordinator.broadcast({
      type: 'server',
      index,
      baseUrl,
      model: server.model,
      plans: plans.map(wirePlan),
      ...(variant ? { variant } : {}),
    });
  }

  async measure(input: LevelMeasureInput): Promise<LevelResult | null> {
    const { levelIndex, plan } = input;
    const n = this.identity.worldSize;
    // A worker failed before this level (its server session could not start): the run is over.
    if (this.run?.failed) return null;
    announceLevel(input);
    this.coordinator.broadcast({
      type: 'level',
      levelIndex,
      firstId: input.firstId,
      firstPromptIndex: input.firstPromptIndex,
      plan: wirePlan(plan),
    });
    const cut = levelCut(input);
    const lost = new Map<number, string>();
    this.onLost = (message) => cut.cut(message, true);
    this.onFail = (reason, exitCode) => input.stopRun(reason, exitCode ?? 1);
    const tellAbort = (): void =>
      this.coordinator.broadcast({ type: 'abort', reason: cut.reason()?.message ?? 'cancelled' });
    cut.signal.addEventListener('abort', tellAbort, { once: true });
    await coolDown(input);
    // Its own records whole, as they finish: the share's run keeps only condensed ones past the accumulator's bound.
    const own: RequestRecord[] = [];
    const done = await runShare(
      { ...input, writer: this.shard ?? input.writer },
      0,
      n,
      {
        batch: async (b, signal) => {
          try {
            return await startAt(input, await this.coordinator.barrier(batchKey(levelIndex, b), signal), 0, signal);
          } catch (error) {
            if (error instanceof WorkerLostError) cut.cut(error.message, true);
            return 0;
          }
        },
        onBatch: (records) => {
          for (const r of records) own.push(r);
        },
      },
      cut.signal,
    );
    const reports = await this.coordinator.reports(
      levelIndex,
      new AbortController().signal,
      cut.signal.aborted ? AFTER_CUT_MS : undefined,
    );
    this.onLost = null;
    cut.signal.removeEventListener('abort', tellAbort);
    const report = shareReport(
      input,
      done,
      this.identity.host,
      0,
      { offsetBefore: null, offsetAfter: null },
      cut.reason()?.message,
    );
    this.reports.push(report);
    const parts: WorkerPart[] = [{ rank: 0, report, records: own }];
    for (let r = 1; r < n; r++) {
      const peer = this.coordinator.peers.get(r);
      if (peer?.lost !== undefined) lost.set(r, peer.lost);
      const offsets = peer?.offsets.get(levelIndex);
      parts.push({
        rank: r,
        report: reports.get(r) ?? null,
        records: this.coordinator.takeRecords(levelIndex, r),
        offsets: { offsetBefore: offsets?.before ?? null, offsetAfter: offsets?.after ?? null },
      });
    }
    return this.summarize(input, parts, lost, cut.reason());
  }

  private async summarize(
    input: LevelMeasureInput,
    parts: WorkerPart[],
    lost: Map<number, string>,
    abortReason: ReturnType<ReturnType<typeof levelCut>['reason']>,
  ): Promise<LevelResult | null> {
    const merge = await mergeParts(
      parts,
      (batch) => input.writer.appendRequests(batch),
      levelAccumulator(input.config.seed, input.levelIndex),
    );
    const output = merge.output(input.plan.rounds);
    const lags = parts.map((p) => p.report?.loopLagP99Ms).filter((v): v is number => typeof v === 'number');
    const level = summarizeLevelRun(input, {
      output,
      startMs: Math.min(
        ...parts.map((p) => p.report?.startMs ?? Infinity).filter(Number.isFinite),
        input.clock.nowMs(),
      ),
      endMs: input.clock.nowMs(),
      loopLagP99Ms: lags.length > 0 ? Math.max(...lags) : null,
      ...(abortReason ? { abortReason } : {}),
    });
    if (lost.size > 0) {
      const names = [...lost.entries()].map(
        ([r, why]) =>
          `${workerName(r, parts[r]?.report?.host ?? this.coordinator.peers.get(r)?.host)} was lost during level ${input.levelIndex + 1}: ${why}`,
      );
      input.stopRun(`${names.join('; ')}; what it measured before is kept`, 1);
    }
    if (!level) return null;
    const hosts = new Map([...this.coordinator.peers.values()].map((p) => [p.rank, p.host] as const));
    hosts.set(0, this.identity.host);
    addWorkerView(level, parts, merge.tallies, hosts, lost);
    return level;
  }

  async end(record: RunRecord): Promise<void> {
    if (this.shard && this.run) {
      const shardRecord: RunRecord = {
        ...record,
        id: `${record.id}-rank-0`,
        levels: [],
        checks: [],
        distributed: { ...record.distributed!, role: 'shard', rank: 0, runId: record.id, levels: this.reports },
      };
      await this.shard.writeRecord(shardRecord);
      await this.shard.flush();
    }
    await this.coordinator.close({
      type: 'end',
      status: record.status,
      ...(record.error ? { reason: record.error } : {}),
    });
  }
}
