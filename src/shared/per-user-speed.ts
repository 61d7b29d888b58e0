import type { LevelResult } from './run-record.js';

/**
 * Tokens per second one user sees while the answer streams (1000 / TPOT p50), the Pareto view's y; null where TPOT
 * measures no decoding: the whole output came in one chunk (a diffusion block at least as long as the output), so
 * E2E - TTFT is only the time to read that chunk and 1000 / TPOT would be a made-up speed.
 */
export function perUserTokPerSec(level: LevelResult): number | null {
  const tpot = level.tpotMs.p50;
  if (typeof tpot !== 'number' || !(tpot > 0)) return null;
  const perChunk = level.tokensPerChunk.p50;
  if (typeof perChunk === 'number' && perChunk >= level.outputLen) return null;
  return 1000 / tpot;
}

/** How many levels with a throughput and outputs of several tokens have no per-user speed (no TPOT: one chunk each). */
function oneChunkLevels(levels: readonly LevelResult[]): number {
  return levels.filter((l) => l.outputTokPerSec !== null && l.outputLen > 1 && perUserTokPerSec(l) === null).length;
}

/** The chart note for those levels; null when there are none. */
export function oneChunkNote(levels: readonly LevelResult[]): string | null {
  const n = oneChunkLevels(levels);
  return n > 0
    ? `Not shown: ${n} level${n === 1 ? '' : 's'} whose whole output came in one chunk (a diffusion block at least as long as the output): TPOT there measures no decoding, so there is no per-user speed.`
    : null;
}
