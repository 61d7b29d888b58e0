import { capacitySearches, parseSloTargets, sloName } from './capacity.js';
import type { SloJudgement, SloTarget, SloVerdict } from './capacity.js';
import { SLO_METRICS_BY_NAME } from './metrics.js';
import type { LevelResult, RunRecord } from './run-record.js';

/**
 * One SLO at one level: meets only when the percentile's confidence interval lies at or under the limit, fails when
 * it lies over it, else uncertain. Failed requests count as misses: more than (100 - P) % of them fail a pP SLO.
 */
export function judgeSlo(level: LevelResult, target: SloTarget): SloJudgement {
  const def = SLO_METRICS_BY_NAME.get(sloName(target));
  const valueMs = def ? def.level(level) : null;
  const ci = def?.ci ? def.ci(level) : null;
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

/** Every level of a run judged against its percentile SLOs (--slo or the capacity search), for the charts. */
export interface LevelSloStatus {
  targets: SloTarget[];
  /** Per level of record.levels: the capacity search's verdict where it probed the level, else judged here. */
  verdicts: SloVerdict[];
  /** Index in record.levels of the capacity the search found; null when none (or no search). */
  capacityLevel: number | null;
}

/** The run's percentile SLOs and each level's verdict; null when the run set none. */
export function levelSloStatus(record: RunRecord): LevelSloStatus | null {
  const parsed = record.config.slo?.targets ? parseSloTargets(record.config.slo.targets) : null;
  // A run may hold several searches (per server configuration and lengths); they share the SLO targets.
  const searches = capacitySearches(record);
  const targets = searches[0]?.targets ?? (parsed?.ok ? parsed.targets : []);
  if (targets.length === 0) return null;
  const probes = new Map(searches.flatMap((c) => c.probes).map((p) => [p.levelIndex, p.verdict]));
  const verdicts = record.levels.map(
    (level, i) =>
      probes.get(i) ?? (level.partial ? 'uncertain' : combineVerdicts(targets.map((t) => judgeSlo(level, t)))),
  );
  // One capacity to ring: with several searches each has its own, and the capacity tables name them.
  const capacity = searches.length === 1 ? searches[0] : undefined;
  const found =
    capacity && capacity.capacity !== null
      ? capacity.probes.find((p) => p.load === capacity.capacity && p.verdict === 'meets')
      : undefined;
  return { targets, verdicts, capacityLevel: found ? found.levelIndex : null };
}
