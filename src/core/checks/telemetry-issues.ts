import type { LevelTelemetry, TelemetryIssue } from '../../shared/run-record.js';
import { dropCode, impossibleFieldKeys } from './telemetry-issues-prose.js';
import { judged, type Facts, type Judged } from './verdict.js';

/** The issues of one telemetry source over the level. */
export function issuesOf(t: LevelTelemetry | undefined, source: TelemetryIssue['source']): TelemetryIssue[] {
  return (t?.issues ?? []).filter((i) => i.source === source);
}

/** What the sentence names: the dropped source's own lines, each impossible field's first value and sample count. */
function issueFacts(issues: readonly TelemetryIssue[]): Facts {
  const facts: Facts = {};
  const dropped = issues.filter((i) => i.code !== 'impossible-value').map((i) => i.detail);
  if (dropped.length > 0) facts.sourceDropped = dropped.join('; ');
  for (const i of issues) {
    if (i.code !== 'impossible-value' || !i.field) continue;
    const keys = impossibleFieldKeys(i.field);
    facts[keys.example] = i.example ?? null;
    facts[keys.samples] = i.count ?? null;
  }
  return facts;
}

/** A check with the source's issues named first; it never passes over them, and carries their code and count. */
export function withIssues(found: Judged, issues: readonly TelemetryIssue[], what: 'gpu' | 'engine'): Judged {
  if (issues.length === 0) return found;
  const impossible = issues.some((i) => i.code === 'impossible-value');
  return judged(
    found.id,
    found.status === 'fail' ? 'fail' : 'warn',
    impossible ? `impossible-${what}-values` : `${what}-source-${dropCode(issues[0]!.code)}`,
    {
      ...found.facts,
      ...issueFacts(issues),
      verdictCode: found.code,
      issues: issues.length,
      fields: issues
        .map((i) => i.field)
        .filter(Boolean)
        .join(','),
    },
  );
}
