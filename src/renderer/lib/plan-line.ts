import { fmtNumber } from '../../shared/format.js';
import { aboutDuration, type RunPlan } from '../../shared/run-estimate.js';

/** The new-run form's estimate, in three lines: what is sent, how long, and what the time leaves out. */
export interface PlanLine {
  sends: string;
  time: string;
  leavesOut: string;
}

const plural = (n: number, one: string): string => `${fmtNumber(n)} ${one}${n === 1 ? '' : 's'}`;

const EXCLUDED: Record<RunPlan['excludes'][number], string> = {
  launch: 'server start',
  calibration: 'prompt calibration',
  'cool-down': 'cool-down waits',
};

/** Where the time comes from, in the words beside it. */
function basisWords(plan: RunPlan, from: string | null): string {
  if (plan.basis === 'arrivals') return 'at the arrival rate';
  const recorded = from ? `the pace of '${from}'` : 'the recorded pace';
  return plan.basis === 'mixed' ? `at the arrival rates and ${recorded}` : `at ${recorded}`;
}

/** The estimate's lines for a plan; `from` names the recorded run a re-run's pace comes from. */
export function planLine(plan: RunPlan, from: string | null = null): PlanLine {
  const configs = plan.serverConfigs > 1 ? ` over ${plural(plan.serverConfigs, 'server configuration')}` : '';
  const leavesOut = `Not counted: ${plan.excludes.map((e) => EXCLUDED[e]).join(', ')}.`;
  if (plan.capacity) {
    return {
      sends: `up to ${plural(plan.levels, 'level')}${configs}, chosen as the capacity search goes`,
      time: 'Time: not known before the search, which stops at the first load that misses an SLO.',
      leavesOut,
    };
  }
  const sends =
    `${plural(plan.levels, 'level')} × ${plural(plan.rounds, 'round')}${configs}: ` +
    `${plural(plan.requests, 'request')}, ${fmtNumber(plan.warmupRequests)} of them warm-up`;
  if (plan.seconds === null) {
    return {
      sends,
      time: 'Time: known once the first level is measured (a closed loop goes at the server’s own pace).',
      leavesOut,
    };
  }
  const time = `${plan.atMost ? 'at most ' : ''}${aboutDuration(plan.seconds)} ${basisWords(plan, from)}`;
  return {
    sends,
    time: `Time: ${time}${plan.atMost ? ' (rounds may end early at the precision asked)' : ''}.`,
    leavesOut,
  };
}
