import type { ClientSample, EngineSample, GpuSample } from '../../shared/telemetry.js';

/** One line of telemetry.jsonl: a sample with its kind. */
type TelemetryLine =
  ({ kind: 'gpu' } & GpuSample) | ({ kind: 'engine' } & EngineSample) | ({ kind: 'client' } & ClientSample);

/** All samples as tagged objects in time order (stable: gpu, engine, client at equal times). */
function telemetryLineObjects(input: {
  gpu?: readonly GpuSample[];
  engine?: readonly EngineSample[];
  client?: readonly ClientSample[];
}): TelemetryLine[] {
  const lines: TelemetryLine[] = [
    ...(input.gpu ?? []).map((s) => ({ kind: 'gpu' as const, ...s })),
    ...(input.engine ?? []).map((s) => ({ kind: 'engine' as const, ...s })),
    ...(input.client ?? []).map((s) => ({ kind: 'client' as const, ...s })),
  ];
  return lines
    .map((l, i) => ({ l, i }))
    .sort((a, b) => a.l.tMs - b.l.tMs || a.i - b.i)
    .map(({ l }) => l);
}

/** telemetry.jsonl content: one JSON object per sample with a `kind` (gpu | engine | client), newline-terminated. */
export function formatTelemetryLines(input: {
  gpu?: readonly GpuSample[];
  engine?: readonly EngineSample[];
  client?: readonly ClientSample[];
}): string {
  return telemetryLineObjects(input)
    .map((l) => `${JSON.stringify(l)}\n`)
    .join('');
}
