import { readdir, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import type { BenchConfig } from '../../shared/config.js';
import type { WorkerLevelReport } from '../../shared/distributed.js';
import type { RunEvent } from '../../shared/events.js';
import type { RequestRecord } from '../../shared/request-record.js';
import type { RunRecord } from '../../shared/run-record.js';
import type { Clock } from '../clock.js';
import { UserError } from '../errors.js';
import type { LevelPlan } from '../load/level-plan.js';
import { levelAccumulator } from '../metrics/level-accumulator.js';
import { loadRun } from '../runs/run-store.js';
import { readRequestLines } from '../run-folder/read-lines.js';
import { recordSecrets } from '../run-folder/redact-folder.js';
import { summarizeLevelRun, type LevelMeasureInput } from '../run/level-measure.js';
import { RunSession } from '../run/run-session.js';
import { loadWorkload, type Workload } from '../workloads/workload.js';
import { addWorkerView } from './checks.js';
import { streamLevel, type RecordSource, type WorkerPart } from './merge.js';

/** One shard folder being merged: its record, its account of each level, and its records read line by line. */
interface Shard {
  dir: string;
  record: RunRecord;
  rank: number;
  reports: Map<number, WorkerLevelReport>;
  /** The shard's requests.jsonl, read through the run-folder reader (schema, bad lines counted). */
  lines: AsyncIterator<RequestRecord>;
  /** The next record read but not yet taken (it belongs to a later level). */
  peeked: RequestRecord | null;
  done: boolean;
}

/** The shard folders named: a shard folder itself, or a merged run folder (its shards/rank-* inside). */
async function shardDirs(paths: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  for (const p of paths) {
    const shards = join(p, 'shards');
    const isRun = await stat(shards).then(
      (s) => s.isDirectory(),
      () => false,
    );
    if (!isRun) out.push(resolve(p));
    else
      for (const name of (await readdir(shards)).filter((n) => /^rank-\d+$/.test(n)).sort())
        out.push(join(resolve(shards), name));
  }
  return out;
}

async function openShard(dir: string): Promise<Shard> {
  const record = await loadRun(dir);
  const d = record.distributed;
  if (d?.role !== 'shard' || d.rank === undefined) {
    throw new UserError(
      `${dir} is not a shard folder of a distributed run: give the shards/rank-N folders, or the run folder that holds them`,
    );
  }
  // A shard without requests (a worker with nothing to send) has no file: it merges as empty.
  const lines = readRequestLines(dir, recordSecrets(record));
  const reports = new Map((d.levels ?? []).map((l) => [l.levelIndex, l] as const));
  return { dir, record, rank: d.rank, reports, lines, peeked: null, done: false };
}

/** The next whole record of a shard (a half line from a killed writer is skipped); null at its end. */
async function nextRecord(shard: Shard): Promise<RequestRecord | null> {
  if (shard.peeked) {
    const r = shard.peeked;
    shard.peeked = null;
    return r;
  }
  if (shard.done) return null;
  // A line cut short by a crash, or one that is not a request, is counted by the reader: the whole lines count.
  const next = await shard.lines.next();
  if (!next.done) return next.value;
  shard.done = true;
  return null;
}

/** A shard's records of one level, pulled one at a time (its file holds levels one after the other). */
function levelSource(shard: Shard, levelIndex: number): RecordSource {
  return async () => {
    for (;;) {
      const r = await nextRecord(shard);
      if (!r) return null;
      if (r.levelIndex < levelIndex) continue;
      if (r.levelIndex === levelIndex) return r;
      shard.peeked = r;
      return null;
    }
  };
}

/** A level measure input for summarizing a merged level after the fact (nothing is sent: no server, no telemetry; notes go to `emit`). */
function offlineInput(
  config: BenchConfig,
  report: WorkerLevelReport,
  workload: Workload,
  clock: Clock,
  firstId: number,
  emit: (event: RunEvent) => void,
): LevelMeasureInput {
  return {
    plan: report.plan as unknown as LevelPlan,
    levelIndex: report.levelIndex,
    serverConfigIndex: report.serverConfigIndex,
    ...(report.serverVariant ? { serverVariant: report.serverVariant } : {}),
    config,
    clock,
    emit,
    workload,
    firstId,
    firstPromptIndex: firstId,
    telemetry: null,
    openingTokens: null,
  } as unknown as LevelMeasureInput;
}

/** What a merge produced. */
export interface MergeResult {
  record: RunRecord;
  dir: string;
  /** Set when a rank's shard was missing: the merged run lacks its requests. */
  failure?: string;
}

/**
 * `servebench merge`: one run from shard folders, after the fact (a worker that could not hand its records to rank 0,
 * or shards gathered from machines without a shared disk). Each shard's raw records are read line by line, level by
 * level, moved onto rank 0's clock with the offsets that shard recorded, and every level is summarized again over all
 * of them, as rank 0 does live. The merged folder goes to `out` (default: beside the run the shards came from).
 */
export async function mergeShards(
  paths: readonly string[],
  options: { out?: string; clock: Clock; now: () => Date; emit?: (event: RunEvent) => void },
): Promise<MergeResult> {
  const dirs = await shardDirs(paths);
  if (dirs.length === 0)
    throw new UserError('servebench merge needs shard folders (shards/rank-N) or a run folder holding them');
  const shards = await Promise.all(dirs.map(openShard));
  const first = shards[0]!.record.distributed!;
  for (const s of shards) {
    if (s.record.distributed!.runId !== first.runId)
      throw new UserError(
        `${s.dir} is a shard of run ${s.record.distributed!.runId}, not of ${first.runId}: merge the shards of one run`,
      );
  }
  const ranks = shards.map((s) => s.rank);
  const twice = ranks.find((r, i) => ranks.indexOf(r) !== i);
  if (twice !== undefined) throw new UserError(`two shards of rank ${twice} were given: give each rank's shard once`);
  shards.sort((a, b) => a.rank - b.rank);
  const base = shards.find((s) => s.rank === 0) ?? shards[0]!;
  const config = base.record.config;
  const out = options.out ?? dirname(dirname(dirname(base.dir)));
  const run = await RunSession.create(
    { ...config, out, label: `${config.label}-merged` },
    {
      clock: options.clock,
      now: options.now,
      emit: () => undefined,
      totalLevels: 0,
      capacitySearches: 0,
    },
  );
  Object.assign(run.record, {
    clock: base.record.clock,
    environment: base.record.environment,
    simulated: base.record.simulated,
    startedAt: base.record.startedAt,
  });
  const worldSize = first.worldSize;
  const missing = Array.from({ length: worldSize }, (_, r) => r).filter((r) => !ranks.includes(r));
  run.record.distributed = {
    role: 'merged',
    worldSize,
    coordinator: first.coordinator,
    launcher: first.launcher,
    workers: shards.flatMap((s) => s.record.distributed!.workers),
  };
  const workload = await loadWorkload(config).catch((): Workload => ({ kind: 'synthetic' }));
  const levels = [...new Set(shards.flatMap((s) => [...s.reports.keys()]))].sort((a, b) => a - b);
  const hosts = new Map(run.record.distributed.workers.map((w) => [w.rank, w.host] as const));
  for (const levelIndex of levels) {
    const parts: WorkerPart[] = shards.map((s) => ({
      rank: s.rank,
      report: s.reports.get(levelIndex) ?? null,
      records: [],
    }));
    const report = parts.find((p) => p.report)!.report!;
    const merge = await streamLevel(
      parts,
      shards.map((s) => levelSource(s, levelIndex)),
      (batch) => run.writer.appendRequests(batch),
      levelAccumulator(config.seed, levelIndex),
    );
    const firstId = Number.isFinite(merge.firstId) ? merge.firstId : 0;
    const input = offlineInput(config, report, workload, options.clock, firstId, options.emit ?? (() => undefined));
    const cut = parts.find((p) => p.report?.abortReason)?.report?.abortReason;
    const level = summarizeLevelRun(input, {
      output: merge.output(report.plan.rounds),
      startMs: merge.startMs,
      endMs: merge.endMs,
      loopLagP99Ms: Math.max(...parts.map((p) => p.report?.loopLagP99Ms ?? 0)),
      ...(cut ? { abortReason: { message: cut, kind: 'server-died' as const } } : {}),
    });
    const lost = new Map(missing.map((r) => [r, 'no shard of it was given']));
    if (level) addWorkerView(level, parts, merge.tallies, hosts, lost);
    await run.addLevel({ levelIndex, firstId: 0, firstPromptIndex: 0 }, level);
  }
  if (missing.length > 0)
    run.fail(
      `merged ${shards.length} of ${worldSize} shards: rank${missing.length > 1 ? 's' : ''} ${missing.join(', ')} missing, their requests are not in this run`,
      1,
    );
  const result = await run.finish();
  return { record: result.record, dir: result.dir, ...(result.failure ? { failure: result.failure } : {}) };
}
