import type { LevelTelemetry, TelemetryIssue } from '../../shared/run-record.js';
import { telemetryFieldName } from '../telemetry/sample-bounds.js';
import { verdict, type Judged } from './verdict.js';

/** The issues of one telemetry source over the level. */
export function issuesOf(t: LevelTelemetry | undefined, source: TelemetryIssue['source']): TelemetryIssue[] {
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
export function withIssues(found: Judged, issues: readonly TelemetryIssue[], what: 'gpu' | 'engine'): Judged {
  if (issues.length === 0) return found;
  const impossible = issues.some((i) => i.code === 'impossible-value');
  return verdict(
    found.id,
    found.status === 'fail' ? 'fail' : 'warn',
    impossible ? `impossible-${what}-values` : `${what}-source-${issues[0]!.code}`,
    {
      ...found.facts,
      verdictCode: found.code,
      issues: issues.length,
      fields: issues
        .map((i) => i.field)
        .filter(Boolean)
        .join(','),
    },
    `${issuesText(issues, what)}; ${found.detail}`,
  );
}
