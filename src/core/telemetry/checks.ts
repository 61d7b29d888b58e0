import type { Check, LevelTelemetry, TelemetryIssue } from '../../shared/run-record.js';
import { telemetryFieldName } from './sample-bounds.js';
import type { TelemetryChecks } from './types.js';

/** Share of the measured window above which thermal or hardware slowdown fails the level. */
export const MEANINGFUL_SHARE = 0.05;

const pct = (x: number) => `${Math.round(x * 100)} %`;

function clockNote(t: LevelTelemetry, lowest: boolean): string {
  const parts: string[] = [];
  if (lowest && t.smClockMinMhz !== null) {
    parts.push(
      `lowest SM clock ${Math.round(t.smClockMinMhz)} MHz${t.clockRatioMin !== null ? ` (${pct(t.clockRatioMin)} of max)` : ''}`,
    );
  } else if (!lowest && t.clockRatioMean !== null) {
    parts.push(`SM clock ${pct(t.clockRatioMean)} of max on average`);
  }
  if (t.tempMaxC !== null) parts.push(`max ${Math.round(t.tempMaxC)} °C`);
  return parts.join(', ');
}

function issuesOf(t: LevelTelemetry | undefined, source: TelemetryIssue['source']): TelemetryIssue[] {
  return (t?.issues ?? []).filter((i) => i.source === source);
}

/** The issues in one clause each: dropped sources as said, impossible values together (field, first value, samples). */
function issuesText(issues: readonly TelemetryIssue[], what: 'gpu' | 'engine'): string {
  const values = issues.filter((i) => i.code === 'impossible-value');
  const parts = issues.filter((i) => i.code !== 'impossible-value').map((i) => i.detail);
  if (values.length > 0) {
    const listed = values.map(
      (i) =>
        `${telemetryFieldName(i.source, i.field ?? '')} ${i.example ?? '?'} (${i.count ?? 1} sample${i.count === 1 ? '' : 's'})`,
    );
    parts.push(
      `${what === 'gpu' ? 'GPU telemetry' : "the engine's /metrics"} reported impossible values, left out: ${listed.join(', ')}`,
    );
  }
  return parts.join('; ');
}

/** A check with the source's issues named first; it never passes over them, and carries their code and count. */
function withIssues(verdict: Check, issues: readonly TelemetryIssue[], what: 'gpu' | 'engine'): Check {
  if (issues.length === 0) return verdict;
  const impossible = issues.some((i) => i.code === 'impossible-value');
  return {
    id: verdict.id,
    status: verdict.status === 'fail' ? 'fail' : 'warn',
    detail: `${issuesText(issues, what)}; ${verdict.detail}`,
    code: impossible ? `impossible-${what}-values` : `${what}-source-${issues[0]!.code}`,
    facts: {
      issues: issues.length,
      fields: issues
        .map((i) => i.field)
        .filter(Boolean)
        .join(','),
    },
  };
}

function throttlingCheck(t: LevelTelemetry | undefined): Check {
  // A dropped source is the verdict's own reason already: said once.
  const issues = issuesOf(t, 'gpu').filter((i) => i.detail !== t?.reason);
  return withIssues(throttlingVerdict(t), issues, 'gpu');
}

function throttlingVerdict(t: LevelTelemetry | undefined): Check {
  if (!t || t.source === 'unavailable') {
    const why = t?.reason ?? 'no GPU telemetry was recorded for this level';
    return { id: 'throttling', status: 'warn', detail: `unknown: ${why}` };
  }
  if (t.samples === 0) {
    return { id: 'throttling', status: 'warn', detail: 'unknown: no GPU sample fell in the measured window' };
  }
  const thermal = t.throttle.thermalFraction ?? 0;
  const hw = t.throttle.hwSlowdownFraction ?? 0;
  const cap = t.throttle.powerCapFraction ?? 0;
  const unknown = t.throttle.unknownFraction ?? 0;
  const slow: string[] = [];
  if (thermal > 0) slow.push(`thermal slowdown ${pct(thermal)}`);
  if (hw > 0) slow.push(`hardware slowdown / power brake ${pct(hw)}`);
  if (thermal >= MEANINGFUL_SHARE || hw >= MEANINGFUL_SHARE) {
    const note = clockNote(t, true);
    return {
      id: 'throttling',
      status: 'fail',
      detail: `${slow.join(' and ')} of the measured window${note ? `; ${note}` : ''}: these numbers are not the card's full speed (check airflow and fans, let it cool between levels)`,
    };
  }
  if (unknown >= 0.5) {
    return {
      id: 'throttling',
      status: 'warn',
      detail: `unknown: the GPU reported no throttle reasons for ${pct(unknown)} of the samples`,
    };
  }
  if (slow.length) {
    const note = clockNote(t, true);
    return {
      id: 'throttling',
      status: 'warn',
      detail: `brief ${slow.join(' and ')} of the measured window${note ? `; ${note}` : ''}`,
    };
  }
  if (cap >= MEANINGFUL_SHARE) {
    const note = clockNote(t, false);
    return {
      id: 'throttling',
      status: 'warn',
      detail: `power-capped ${pct(cap)} of the measured window (normal at full load: the card runs at its power limit${note ? `; ${note}` : ''}); no thermal or hardware slowdown`,
    };
  }
  const note = clockNote(t, false);
  return { id: 'throttling', status: 'pass', detail: `no thermal or hardware slowdown${note ? `; ${note}` : ''}` };
}

function preemptionsCheck(t: LevelTelemetry | undefined): Check | null {
  const issues = issuesOf(t, 'engine');
  const verdict = preemptionsVerdict(t);
  if (verdict) return withIssues(verdict, issues, 'engine');
  if (issues.length === 0) return null;
  return withIssues(
    { id: 'preemptions', status: 'warn', detail: 'unknown: no engine preemption count to go by' },
    issues,
    'engine',
  );
}

function preemptionsVerdict(t: LevelTelemetry | undefined): Check | null {
  if (!t || t.preemptions === null) return null;
  if (t.preemptions === 0) return { id: 'preemptions', status: 'pass', detail: 'the engine preempted no request' };
  const n = Math.round(t.preemptions);
  const kv = t.kvUsagePeak !== null ? ` (KV cache peaked at ${pct(t.kvUsagePeak)})` : '';
  return {
    id: 'preemptions',
    status: 'warn',
    detail: `the engine preempted ${n} request${n === 1 ? '' : 's'} during the measured window${kv}: preempted requests are recomputed, so their latency includes that work`,
  };
}

/**
 * Checks from one level's telemetry. `throttling` fails when thermal or hardware slowdown covered
 * at least 5 % of the measured window, warns when only power-capped (normal at full load) or when
 * telemetry is unavailable ("unknown", never pass). `preemptions` warns when the engine preempted
 * requests; it is omitted without engine metrics.
 */
export const telemetryChecks: TelemetryChecks = (t) => {
  const checks: Check[] = [throttlingCheck(t)];
  const pre = preemptionsCheck(t);
  if (pre) checks.push(pre);
  return checks;
};
