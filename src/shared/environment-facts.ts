import type { RunRecord } from './run-record.js';

/** A labelled fact of the headline or the environment section. */
export interface Fact {
  label: string;
  value: string;
}

/** The environment section: host, servebench, engine, GPUs. */
export function environmentFacts(record: RunRecord): Fact[] {
  const env = record.environment;
  const h = env.host;
  const facts: Fact[] = [
    { label: 'Host', value: `${h.hostname}: ${h.os}` },
    {
      label: 'CPU',
      value: `${h.cpu ?? 'unknown'} (${h.cpus} cores)${h.memoryGiB ? `, ${h.memoryGiB} GiB memory` : ''}`,
    },
    { label: 'Node', value: h.node },
    { label: 'servebench', value: env.servebenchVersion },
    { label: 'Engine', value: `${env.engine.kind} ${env.engine.version ?? ''}`.trim() },
  ];
  if (env.engine.url) facts.push({ label: 'Server URL', value: env.engine.url });
  for (const g of env.gpus ?? []) {
    facts.push({
      label: `GPU ${g.index}`,
      value: [
        g.name ?? 'unknown',
        g.memoryMiB !== null ? `${Math.round(g.memoryMiB / 1024)} GiB` : null,
        g.driver ? `driver ${g.driver}` : null,
        g.cudaVersion ? `CUDA ${g.cudaVersion}` : null,
        g.powerLimitW !== null ? `power limit ${g.powerLimitW} W` : null,
        g.maxSmClockMhz !== null ? `max SM clock ${g.maxSmClockMhz} MHz` : null,
      ]
        .filter(Boolean)
        .join(', '),
    });
  }
  facts.push({ label: 'Started', value: record.startedAt });
  facts.push({ label: 'Finished', value: record.finishedAt ?? 'not finished' });
  return facts;
}

/** The server's command line as run (secrets already redacted in the record), or what ran it instead. */
export function serverCommandText(record: RunRecord): string {
  const e = record.environment.engine;
  return e.command ?? `(not launched by servebench: ${e.kind}${e.url ? ` at ${e.url}` : ''})`;
}
