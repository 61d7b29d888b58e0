import type { SloJudgement, SloTarget, SloVerdict, CapacityProbe } from '../../shared/capacity.js';
import type { LevelResult, Summary } from '../../shared/run-record.js';

const SUMMARY_OF = { ttft: 'ttftMs', tpot: 'tpotMs', e2e: 'e2eMs', itl: 'itlMs' } as const;

/**
 * One SLO at one level: meets only when the percentile's confidence interval lies at or under the limit, fails when
 * it lies over it, else uncertain. Failed requests count as misses: more than (100 - P) % of them fail a pP SLO.
 */
export function judgeSlo(level: LevelResult, target: SloTarget): SloJudgement {
  const summary: Summary = level[SUMMARY_OF[target.metric]];
  const valueMs = target.percentile === 95 ? summary.p95 : summary.p99;
  const ci = target.percentile === 95 ? summary.p95Ci : summary.p99Ci;
  const total = level.completed + level.failed;
  const failShare = total > 0 ? level.failed / total : 0;
  if (failShare > 1 - target.percentile / 100) {
    const pct = Math.round(failShare * 1000) / 10;
    return { target, valueMs, ci, verdict: 'fails', note: `${pct} % of requests failed` };
  }
  if (valueMs === null || ci === null) {
    return { target, valueMs, ci, verdict: 'uncertain', note: 'too few samples for an interval' };
  }
  const verdict: SloVerdict = ci[1] <= target.limitMs ? 'meets' : ci[0] > target.limitMs ? 'fails' : 'uncertain';
  return { target, valueMs, ci, verdict };
}

/** A level's verdict over every SLO: fails if one fails, meets if all meet, else uncertain. */
export function combineVerdicts(judgements: readonly SloJudgement[]): SloVerdict {
  if (judgements.some((j) => j.verdict === 'fails')) return 'fails';
  return judgements.every((j) => j.verdict === 'meets') ? 'meets' : 'uncertain';
}

/** A measured level as the search sees it: its verdict, SLO judgements and goodput in requests/s. */
export function probeOf(
  load: number,
  levelIndex: number,
  level: LevelResult,
  targets: readonly SloTarget[],
): CapacityProbe {
  const slos = targets.map((t) => judgeSlo(level, t));
  return {
    load,
    levelIndex,
    verdict: level.partial ? 'uncertain' : combineVerdicts(slos),
    slos,
    goodputReqPerSec: level.goodput !== undefined && level.reqPerSec !== null ? level.goodput * level.reqPerSec : null,
    outputTokPerSec: level.outputTokPerSec,
    reqPerSec: level.reqPerSec,
  };
}
