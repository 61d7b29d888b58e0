import { telemetryFieldName } from '../telemetry/sample-bounds.js';
import type { Facts } from './verdict.js';

// The sentence naming a telemetry source's issues (withIssues in telemetry-issues.ts), from its facts.

/** Why a source was dropped (TelemetryIssue codes besides 'impossible-value'): each a code of the check naming it. */
export const TELEMETRY_DROP_CODES = ['oversized', 'line-too-long', 'timed-out', 'flooding', 'dropped'] as const;

/** The check code for a drop: its own where it has a sentence, 'dropped' for one an older or newer record names. */
export const dropCode = (code: string): (typeof TELEMETRY_DROP_CODES)[number] =>
  (TELEMETRY_DROP_CODES as readonly string[]).includes(code)
    ? (code as (typeof TELEMETRY_DROP_CODES)[number])
    : 'dropped';

/** The fact keys of one impossible field: its first value and how many samples had one. */
export const impossibleFieldKeys = (field: string): { example: string; samples: string } => ({
  example: `${field}Example`,
  samples: `${field}Samples`,
});

/** The impossible fields in one clause: field, first value, samples. */
function valuesText(f: Facts, what: 'gpu' | 'engine'): string | null {
  const fields = String(f.fields ?? '')
    .split(',')
    .filter(Boolean);
  if (fields.length === 0) return null;
  const listed = fields.map((field) => {
    const keys = impossibleFieldKeys(field);
    const count = f[keys.samples];
    const example = f[keys.example];
    return (
      `${telemetryFieldName(what, field)} ${typeof example === 'string' ? example : '?'} ` +
      `(${typeof count === 'number' ? count : 1} sample${count === 1 ? '' : 's'})`
    );
  });
  return `${what === 'gpu' ? 'GPU telemetry' : "the engine's /metrics"} reported impossible values, left out: ${listed.join(', ')}`;
}

/** The source's issues, one clause each: why it was dropped as the telemetry said, then the impossible values. */
export const telemetryIssuesText =
  (what: 'gpu' | 'engine') =>
  (f: Facts): string =>
    [typeof f.sourceDropped === 'string' ? f.sourceDropped : null, valuesText(f, what)]
      .filter((p): p is string => p !== null)
      .join('; ');
