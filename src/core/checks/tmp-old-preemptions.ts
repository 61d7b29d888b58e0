import type { LevelTelemetry } from '../../shared/run-record.js';
import { defineCheck } from './define.js';
import { issuesOf, withIssues } from './tmp-old-telemetry-issues.js';
import { judged, type Judged } from './verdict.js';

function preemptionsVerdict(t: LevelTelemetry | undefined): Judged | null {
  if (!t || t.preemptions === null) return null;
  const facts = { preemptions: Math.round(t.preemptions), kvUsagePeak: t.kvUsagePeak };
  if (t.preemptions === 0) return judged('preemptions', 'pass', 'none-preempted', facts);
  return judged('preemptions', 'warn', 'preempted', facts);
}

/**
 * preemptions: warns when the engine preempted requests (they are recomputed); null without engine metrics, unless
 * the engine source had issues, which it names.
 */
export function preemptionsCheck(t: LevelTelemetry | undefined): Judged | null {
  const issues = issuesOf(t, 'engine');
  const found = preemptionsVerdict(t);
  if (found) return withIssues(found, issues, 'engine');
  if (issues.length === 0) return null;
  return withIssues(judged('preemptions', 'warn', 'count-unknown', { preemptions: null }), issues, 'engine');
}

export const preemptions = defineCheck('preemptions', {
  limits: {},
  evaluate: (e) => (e.telemetry ? preemptionsCheck(e.telemetry.summary) : null),
});
