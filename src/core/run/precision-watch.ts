import { parsePrecision } from '../../shared/precision.js';
import type { RequestRecord } from '../../shared/request-record.js';
import type { LevelPrecision } from '../../shared/run-record.js';
import { precisionAt } from '../metrics/precision.js';

/** A level's --precision watch: asked after each round whether to stop; keeps the last look for the level's record. */
export interface PrecisionWatch {
  stopAfterRound(roundsCompleted: number, measured: readonly RequestRecord[]): boolean;
  last(): LevelPrecision | null;
}

/** The watch for a level of `plannedRounds` rounds; null without --precision (every planned round runs). */
export function precisionWatch(text: string | undefined, plannedRounds: number): PrecisionWatch | null {
  if (text === undefined) return null;
  const parsed = parsePrecision(text);
  if (!parsed.ok) return null;
  let last: LevelPrecision | null = null;
  return {
    stopAfterRound: (rounds, measured) => {
      last = precisionAt(measured, parsed.targets, rounds, plannedRounds);
      return last.reached;
    },
    last: () => last,
  };
}
