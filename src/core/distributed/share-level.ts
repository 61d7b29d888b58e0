import type { WorkerLevelReport } from '../../shared/distributed.js';
import type { RequestRecord } from '../../shared/request-record.js';
import type { LevelPlan } from '../load/level-plan.js';
import { waitUntil } from '../load/scheduler.js';
import type { AbortReason } from '../load/stream-client.js';
import { levelPrompts, runLevelRequests, type LevelMeasureInput, type LevelRun } from '../run/level-measure.js';
import { mixSeed } from '../workloads/trace-prompts.js';
import { shareOf, type WorkerShare } from './split.js';
import { wirePlan } from './protocol.js';

/** How one process of a distributed run takes part in a level's batches. */
export interface ShareSync {
  /** Waits at the batch's barrier and until its start instant; resolves with how late this process began (ms). */
  batch(batch: number, signal: AbortSignal): Promise<number>;
  /** Sees each finished batch (already renumbered), e.g. to send it to rank 0. */
  onBatch?: (records: RequestRecord[]) => void;
}

/** A worker's run of its share of a level, and its account of it. */
export interface ShareRun {
  share: WorkerShare;
  run: LevelRun | null;
  startLateMs: number;
}

/**
 * Multi-turn: conversation numbers are counted per worker; the level's are its prompt places / turns, so each
 * record takes the number of its first turn's place (conversations stay unique across workers).
 */
function renumberConversations(records: RequestRecord[], share: WorkerShare, turns: number | undefined): void {
  if (!turns || turns <= 1) return;
  for (const r of records) {
    const c = r.workload?.conversation;
    if (c === undefined) continue;
    const place = share.positions[c * turns];
    if (place !== undefined) r.workload = { ...r.workload, conversation: Math.floor(place / turns) };
  }
}

/** The aborter of a level's share: stops its requests at once with a reason the level's record keeps. */
export function levelCut(input: LevelMeasureInput): {
  signal: AbortSignal;
  cut: (message: string, fails: boolean) => void;
  reason: () => Partial<AbortReason> | undefined;
} {
  const controller = new AbortController();
  let kept: Partial<AbortReason> | undefined;
  const signal = AbortSignal.any([input.signal, controller.signal]);
  return {
    signal,
    cut: (message, fails) => {
      if (signal.aborted) return;
      // A lost worker fails the level like a server death: its load was not all there. Its requests are cancelled.
      kept = { message, kind: fails ? 'server-died' : 'cancelled' };
      controller.abort(kept);
      input.executor.abortAll({ message, kind: 'cancelled' });
    },
    reason: () => kept ?? (input.signal.aborted ? (input.signal.reason as Partial<AbortReason>) : undefined),
  };
}

/**
 * Runs worker `rank`'s share of the level: its prompts (its places in the level, so prompts stay unique across
 * workers), then its warm-up and rounds, each batch started at the common instant. Its arrivals get their own seed.
 */
export async function runShare(
  input: LevelMeasureInput,
  rank: number,
  worldSize: number,
  sync: ShareSync,
  signal: AbortSignal,
): Promise<ShareRun> {
  const plan: LevelPlan = input.plan;
  const share = shareOf(plan, rank, worldSize);
  const prompts = await levelPrompts({ ...input, signal }, share.positions);
  let startLateMs = 0;
  const batch = async (b: number): Promise<void> => {
    startLateMs = Math.max(startLateMs, await sync.batch(b, signal));
  };
  if (signal.aborted) return { share, run: null, startLateMs };
  const shareInput: LevelMeasureInput = {
    ...input,
    plan: share.plan,
    firstId: input.firstId + share.firstIdOffset,
    config: { ...input.config, seed: rank === 0 ? input.config.seed : mixSeed(input.config.seed, rank) },
    signal,
  };
  // A worker with no warm-up of its own still keeps the level's first barrier.
  if (plan.warmup > 0 && share.plan.warmup === 0) await batch(-1);
  const run = await runLevelRequests(shareInput, prompts, {
    beforeBatch: batch,
    onBatch: (records) => {
      renumberConversations(records, share, plan.turns);
      sync.onBatch?.(records);
    },
  });
  return { share, run, startLateMs };
}

/** Waits until rank 0's start instant `atMs` on this process's clock (offset: rank0 = local + offset); how late it was. */
export async function startAt(
  input: LevelMeasureInput,
  atMs: number,
  offsetMs: number,
  signal: AbortSignal,
): Promise<number> {
  const local = atMs - offsetMs;
  const late = Math.max(0, input.clock.nowMs() - local);
  await waitUntil(input.clock, local, signal);
  return late;
}

/** This process's report of its share of a level. */
export function shareReport(
  input: LevelMeasureInput,
  done: ShareRun,
  host: string,
  rank: number,
  offsets: Pick<WorkerLevelReport, 'offsetBefore' | 'offsetAfter'>,
  abortReason: string | undefined,
): WorkerLevelReport {
  const out = done.run?.output;
  const report: WorkerLevelReport = {
    rank,
    host,
    levelIndex: input.levelIndex,
    serverConfigIndex: input.serverConfigIndex,
    plan: wirePlan(input.plan),
    share: wirePlan(done.share.plan),
    requests: out ? out.warmup.length + out.measured.length : 0,
    ...offsets,
    loopLagP99Ms: done.run?.loopLagP99Ms ?? null,
    roundsCompleted: out?.roundsCompleted ?? 0,
    aborted: out ? out.aborted : true,
    skippedTurns: out?.skippedTurns ?? 0,
    startLateMs: done.startLateMs,
    startMs: done.run?.startMs ?? input.clock.nowMs(),
    endMs: done.run?.endMs ?? input.clock.nowMs(),
  };
  if (input.serverVariant) report.serverVariant = input.serverVariant;
  if (report.aborted && abortReason) report.abortReason = abortReason;
  return report;
}
