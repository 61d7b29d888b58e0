import { fmtNumber } from '../../shared/format.js';
import { judgeOpenLoopSpread, type OpenLoopRound } from '../metrics/open-loop-spread.js';
import { coefficientOfVariation } from '../metrics/throughput.js';
import { isPooling } from '../../shared/endpoint-kinds.js';
import { defineCheck } from './define.js';
import { judged, type Facts, type Judged } from './verdict.js';

/** Round-spread limit: a CV above this means the environment is wrong (docs/architecture.md: 15 %). */
const ROUND_CV_LIMIT = 0.15;

/**
 * round-spread: CV of per-round output tok/s of the COMPLETE rounds at most 15 %; fewer than 2 complete rounds cannot
 * show a spread. partialRounds (rounds cut short by a cancel or a dying server) are left out and named; with no
 * complete round at all the level has no throughput, which the check warns about. In open loop (`openLoop`: the
 * complete rounds' arrivals) a round's throughput follows its own random arrivals: the rounds are judged against
 * what their arrivals offered instead (open-loop-spread.ts), so the 15 % stays about the server's speed.
 */
export function roundSpreadCheck(
  perRoundOutputTokPerSec: readonly number[],
  partialRounds: number = 0,
  uncountedRequests: number = 0,
  openLoop: readonly OpenLoopRound[] | null = null,
): Judged {
  const rounds = perRoundOutputTokPerSec.length;
  if (uncountedRequests > 0) return judged('round-spread', 'warn', 'output-count-impossible', { uncountedRequests });
  const facts: Facts = {
    rounds,
    partialRounds,
    limit: ROUND_CV_LIMIT,
    roundsTokPerS: perRoundOutputTokPerSec.map((x) => fmtNumber(x)).join(', '),
  };
  if (rounds === 0 && partialRounds > 0) return judged('round-spread', 'warn', 'no-complete-round', facts);
  if (rounds < 2) return judged('round-spread', 'warn', 'too-few-rounds', facts);
  const cv = coefficientOfVariation(perRoundOutputTokPerSec);
  if (cv === null) return judged('round-spread', 'warn', 'no-output', facts);
  if (openLoop && openLoop.length === rounds) {
    const open = judgeOpenLoopSpread(cv, ROUND_CV_LIMIT, openLoop);
    return judged('round-spread', open.status, open.code, { ...facts, ...open.facts, openLoop: true });
  }
  if (cv <= ROUND_CV_LIMIT) return judged('round-spread', 'pass', 'steady', { ...facts, cv });
  return judged('round-spread', 'fail', 'spread-over-limit', { ...facts, cv });
}

export const roundSpread = defineCheck('round-spread', {
  limits: { cv: ROUND_CV_LIMIT },
  evaluate: (e) => {
    const complete = e.rounds.filter((r) => r.partial !== true);
    return roundSpreadCheck(
      // A pooling level generates nothing: its work per round is the input tokens it embedded or scored.
      complete.map((r) => (isPooling(e.endpoint) ? r.totalTokPerSec : r.outputTokPerSec)),
      e.rounds.length - complete.length,
      e.uncountedRequests,
      e.openLoopRounds,
    );
  },
});
