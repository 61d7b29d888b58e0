import type { LevelTelemetry } from '../../shared/run-record.js';
import { defineCheck } from './define.js';
import { issuesOf, withIssues } from './tmp-old-telemetry-issues.js';
import { judged, type Facts, type Judged } from './verdict.js';

/** Share of the measured window above which thermal or hardware slowdown fails the level. */
const MEANINGFUL_SHARE = 0.05;
/** Share of samples without throttle reasons from which the GPU's throttling is unknown. */
const UNKNOWN_REASONS_SHARE = 0.5;

function throttleFacts(t: LevelTelemetry): Facts {
  return {
    samples: t.samples,
    thermalFraction: t.throttle.thermalFraction ?? 0,
    hwSlowdownFraction: t.throttle.hwSlowdownFraction ?? 0,
    powerCapFraction: t.throttle.powerCapFraction ?? 0,
    unknownFraction: t.throttle.unknownFraction ?? 0,
    smClockMinMhz: t.smClockMinMhz,
    clockRatioMin: t.clockRatioMin,
    clockRatioMean: t.clockRatioMean,
    tempMaxC: t.tempMaxC,
  };
}

function throttlingVerdict(t: LevelTelemetry | undefined): Judged {
  if (!t || t.source === 'unavailable') {
    const reason = t?.reason ?? 'no GPU telemetry was recorded for this level';
    return judged('throttling', 'warn', 'telemetry-unavailable', { reason });
  }
  const facts = throttleFacts(t);
  if (t.samples === 0) return judged('throttling', 'warn', 'no-samples', facts);
  const thermal = facts.thermalFraction as number;
  const hw = facts.hwSlowdownFraction as number;
  if (thermal >= MEANINGFUL_SHARE || hw >= MEANINGFUL_SHARE) return judged('throttling', 'fail', 'gpu-slowed', facts);
  if ((facts.unknownFraction as number) >= UNKNOWN_REASONS_SHARE)
    return judged('throttling', 'warn', 'reasons-unknown', facts);
  if (thermal > 0 || hw > 0) return judged('throttling', 'warn', 'brief-slowdown', facts);
  if ((facts.powerCapFraction as number) >= MEANINGFUL_SHARE)
    return judged('throttling', 'warn', 'power-capped', facts);
  return judged('throttling', 'pass', 'no-slowdown', facts);
}

/**
 * throttling: fails when thermal or hardware slowdown covered at least 5 % of the measured window, warns when only
 * power-capped (normal at full load) or when telemetry is unavailable ("unknown", never pass); the GPU source's
 * issues (dropped, impossible values) are named first.
 */
export function throttlingCheck(t: LevelTelemetry | undefined): Judged {
  // A dropped source is the verdict's own reason already: said once.
  const issues = issuesOf(t, 'gpu').filter((i) => i.detail !== t?.reason);
  return withIssues(throttlingVerdict(t), issues, 'gpu');
}

export const throttling = defineCheck('throttling', {
  limits: { slowdownShare: MEANINGFUL_SHARE, unknownReasonsShare: UNKNOWN_REASONS_SHARE },
  evaluate: (e) => (e.telemetry ? throttlingCheck(e.telemetry.summary) : null),
});
