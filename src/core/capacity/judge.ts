import type { SloTarget, CapacityProbe } from '../../shared/capacity.js';
import type { LevelResult } from '../../shared/run-record.js';
import { combineVerdicts, judgeSlo } from '../../shared/slo-judge.js';

// The judgement lives in shared/ so the app's charts judge levels the same way.
export { judgeSlo };

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
