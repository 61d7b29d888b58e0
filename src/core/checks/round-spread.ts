import { fmtNum, fmtPct } from '../metrics/format.js';
import { judgeOpenLoopSpread, type OpenLoopRound } from '../metrics/open-loop-spread.js';
import { coefficientOfVariation } from '../metrics/throughput.js';
import { plural } from './helpers.js';
import { defineCheck } from './define.js';
import { verdict, type Judged } from './verdict.js';

/** Round-spread limit: a CV above this means the environment is wrong (DESIGN.md, the article's 15 %). */
export const ROUND_CV_LIMIT = 0.15;

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
  if (uncountedRequests > 0) {
    return verdict(
      'round-spread',
      'warn',
      'output-count-impossible',
      { uncountedRequests },
      `no spread: the server's output count of ${plural(uncountedRequests, 'request')} was impossible ` +
        '(see token-agreement), so per-round throughput is unknown',
    );
  }
  const list = `${perRoundOutputTokPerSec.map(fmtNum).join(', ')} tok/s`;
  const leftOut = partialRounds > 0 ? `; ${plural(partialRounds, 'partial round')} left out` : '';
  const facts = { rounds, partialRounds, limit: ROUND_CV_LIMIT };
  if (rounds === 0 && partialRounds > 0) {
    return verdict(
      'round-spread',
      'warn',
      'no-complete-round',
      facts,
      `no round completed: ${partialRounds === 1 ? 'the partial round' : `${partialRounds} partial rounds`} ` +
        '(cut short by a cancel or a server failure) give no throughput, cost or spread',
    );
  }
  if (rounds < 2) {
    return verdict(
      'round-spread',
      'warn',
      'too-few-rounds',
      facts,
      `${plural(rounds, partialRounds > 0 ? 'complete round' : 'round')} (${list})${leftOut}: run at least 2 rounds to see the spread`,
    );
  }
  const cv = coefficientOfVariation(perRoundOutputTokPerSec);
  if (cv === null)
    return verdict(
      'round-spread',
      'warn',
      'no-output',
      facts,
      `no output in ${rounds} rounds${leftOut}: spread undefined`,
    );
  const head = `CV ${fmtPct(cv)} over ${rounds} rounds (${list})${leftOut}`;
  if (openLoop && openLoop.length === rounds) {
    const judged = judgeOpenLoopSpread(cv, ROUND_CV_LIMIT, openLoop);
    return verdict('round-spread', judged.status, judged.code, { ...facts, ...judged.facts }, head + judged.text);
  }
  if (cv <= ROUND_CV_LIMIT) return verdict('round-spread', 'pass', 'steady', { ...facts, cv }, head);
  return verdict(
    'round-spread',
    'fail',
    'spread-over-limit',
    { ...facts, cv },
    `${head} exceeds ${fmtPct(ROUND_CV_LIMIT)}: look for throttling or other load on the GPU`,
  );
}

export const roundSpread = defineCheck('round-spread', {
  limits: { cv: ROUND_CV_LIMIT },
  evaluate: (e) => {
    const complete = e.rounds.filter((r) => r.partial !== true);
    return roundSpreadCheck(
      complete.map((r) => r.outputTokPerSec),
      e.rounds.length - complete.length,
      e.uncountedRequests,
      e.openLoopRounds,
    );
  },
});
