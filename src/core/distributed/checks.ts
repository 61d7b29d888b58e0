import { fmtShare } from '../../shared/format.js';
import type { WorkerLevelView } from '../../shared/distributed.js';
import type { Check, LevelResult } from '../../shared/run-record.js';
import { STATUS_SEVERITY } from '../../shared/check-status.js';
import { clientCheck } from '../checks/client.js';
import { clockCheck } from '../checks/clock.js';
import { summarize } from '../metrics/percentiles.js';
import { driftPpm } from './clock-sync.js';
import { workerName } from './coordinator.js';
import type { PartTally, WorkerPart } from './merge.js';

/** Each worker's part of a level as the per-worker view shows it: share, clock, own client check. */
function workerViews(
  parts: readonly WorkerPart[],
  tallies: ReadonlyMap<number, PartTally>,
  hosts: ReadonlyMap<number, string>,
  lost: ReadonlyMap<number, string>,
): WorkerLevelView[] {
  const tallyOf = (rank: number): PartTally => tallies.get(rank) ?? { measured: 0, scheduleLags: [] };
  const measuredTotal = parts.reduce((s, p) => s + tallyOf(p.rank).measured, 0);
  return parts.map((p) => {
    const tally = tallyOf(p.rank);
    const scheduleLagP99Ms = scheduleLagP99(tally.scheduleLags);
    const o = p.report ?? p.offsets;
    const before = o?.offsetBefore ?? null;
    const after = o?.offsetAfter ?? null;
    const loopLagP99Ms = p.report?.loopLagP99Ms ?? null;
    const share = p.report?.share;
    const own = clientCheck({ loopLagP99Ms, scheduleLagP99Ms });
    const view: WorkerLevelView = {
      rank: p.rank,
      host: p.report?.host ?? hosts.get(p.rank) ?? '',
      concurrency: share?.concurrency ?? 0,
      requests: tally.measured,
      share: measuredTotal > 0 ? tally.measured / measuredTotal : 0,
      offsetMs: p.rank === 0 ? 0 : (before?.offsetMs ?? after?.offsetMs ?? null),
      uncertaintyMs:
        p.rank === 0
          ? 0
          : Math.max(before?.uncertaintyMs ?? -1, after?.uncertaintyMs ?? -1) >= 0
            ? Math.max(before?.uncertaintyMs ?? 0, after?.uncertaintyMs ?? 0)
            : null,
      offsetChangeMs: before && after ? after.offsetMs - before.offsetMs : null,
      driftPpm: driftPpm(before, after),
      loopLagP99Ms,
      scheduleLagP99Ms,
      client: own.status,
      startLateMs: p.report?.startLateMs ?? 0,
    };
    if (own.code !== undefined) view.clientCode = own.code;
    if (share?.rate !== undefined) view.rate = share.rate;
    if (share?.maxInFlight !== undefined) view.maxInFlight = share.maxInFlight;
    const why = lost.get(p.rank);
    if (why !== undefined) view.lost = why;
    return view;
  });
}

/**
 * client, for a merged level: each worker's own client check (its event loop and schedule lag); the worst decides,
 * and a worker that fell behind is named with its share of the requests (its timings are its own, not the server's).
 */
export function workersClientCheck(all: readonly WorkerLevelView[]): Check {
  // A worker that sent nothing at this level (concurrency below the world size) is no client of it.
  const sending = all.filter((v) => v.requests > 0);
  const views = sending.length > 0 ? sending : all;
  const checks = views.map((v) => ({
    v,
    c: clientCheck({ loopLagP99Ms: v.loopLagP99Ms, scheduleLagP99Ms: v.scheduleLagP99Ms }),
  }));
  const worst = checks.reduce(
    (a, b) => (STATUS_SEVERITY[b.c.status] > STATUS_SEVERITY[a.c.status] ? b : a),
    checks[0]!,
  );
  const status = worst.c.status;
  const bad = checks.filter((x) => x.c.status !== 'pass');
  const lagOf = (v: WorkerLevelView): number => Math.max(v.loopLagP99Ms ?? 0, v.scheduleLagP99Ms ?? 0);
  const facts = {
    workers: views.length,
    worstRank: worst.v.rank,
    worstLoopLagP99Ms: worst.v.loopLagP99Ms,
    worstScheduleLagP99Ms: worst.v.scheduleLagP99Ms,
    worstShare: worst.v.share,
  };
  if (bad.length === 0) {
    const top = views.reduce((a, b) => (lagOf(b) > lagOf(a) ? b : a), views[0]!);
    return {
      id: 'client',
      status,
      detail: `every one of ${views.length} workers kept up; the busiest, ${workerName(top.rank, top.host)}: ${checks.find((x) => x.v === top)!.c.detail}`,
      code: 'workers-kept-up',
      facts,
    };
  }
  const detail = bad
    .map(
      (x) => `${workerName(x.v.rank, x.v.host)}, which sent ${fmtShare(x.v.share, 1)} of the requests: ${x.c.detail}`,
    )
    .join('; ');
  return { id: 'client', status, detail, code: status === 'fail' ? 'worker-bottleneck' : 'worker-lagging', facts };
}

/** Schedule lag of a worker's measured records (send - scheduled), p99; null in closed loop. */
function scheduleLagP99(lags: readonly number[]): number | null {
  return lags.length > 0 ? summarize(lags).p99 : null;
}

/** A merged level's per-worker view and checks: each worker's own client check in place of one process's, and the clock check. */
export function addWorkerView(
  level: LevelResult,
  parts: readonly WorkerPart[],
  tallies: ReadonlyMap<number, PartTally>,
  hosts: ReadonlyMap<number, string>,
  lost: ReadonlyMap<number, string>,
): void {
  const views = workerViews(parts, tallies, hosts, lost);
  level.workers = views;
  level.checks = level.checks.map((c) => (c.id === 'client' ? workersClientCheck(views) : c));
  level.checks.push(clockCheck(views, level.rounds));
}
