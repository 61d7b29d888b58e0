import { isPooling, type EndpointKind } from './endpoint-kinds.js';

/**
 * The credibility checks, declared once in the order a report lists them: id, whether a level or the whole run is
 * judged, a title, and what passing guarantees. CheckId comes from here; src/core/checks/registry.ts gives each its
 * rule, and docs/checks.md is generated from both.
 */
export const CHECK_CATALOG = [
  {
    id: 'output-length',
    scope: 'level',
    title: 'Output length',
    guards: "every request produced exactly the requested tokens, by the server's count",
    generationOnly: true,
  },
  {
    id: 'input-length',
    scope: 'level',
    title: 'Input length',
    guards: "every prompt had the requested tokens, by the server's usage.prompt_tokens",
  },
  {
    id: 'streaming',
    scope: 'level',
    title: 'Streaming',
    guards: 'tokens arrived over time as the server made them, not in one burst at the end',
    generationOnly: true,
  },
  {
    id: 'structured-output',
    scope: 'level',
    title: 'Structured output',
    guards:
      "with --response-format or --tools: every answer parsed and matched what was asked (JSON Schema, full regex match, one of the choices, tool-call arguments against the tool's parameters)",
    generationOnly: true,
  },
  {
    id: 'warmup',
    scope: 'level',
    title: 'Warm-up',
    guards: 'warm-up requests were sent, succeeded and were discarded before measuring',
  },
  {
    id: 'round-spread',
    scope: 'level',
    title: 'Round spread',
    guards:
      'the output tok/s (input tok/s for embeddings, rerank and score) of the complete rounds agree (coefficient of variation within the limit)',
  },
  {
    id: 'sample-size',
    scope: 'level',
    title: 'Sample size',
    guards: 'every percentile shown (p95, p99) has enough samples for its confidence interval',
  },
  {
    id: 'errors',
    scope: 'level',
    title: 'Errors',
    guards: 'failed requests are counted, never dropped; a few warn, more fail',
  },
  {
    id: 'prefix-cache',
    scope: 'level',
    title: 'Prefix cache',
    guards: "prompts were unique, so no request rode on another's cached prefill",
  },
  {
    id: 'client',
    scope: 'level',
    title: 'Client',
    guards: 'servebench offered the asked load and its event-loop and schedule lag stayed small',
  },
  {
    id: 'token-agreement',
    scope: 'level',
    title: 'Token agreement',
    guards: "the client's token count agrees with the server's, with no lost or malformed stream events",
    generationOnly: true,
  },
  {
    id: 'cut-short',
    scope: 'level',
    title: 'Cut short',
    guards: 'present only when a crash or a cancel ended the level before its rounds were done',
  },
  {
    id: 'throttling',
    scope: 'level',
    title: 'Throttling',
    guards: 'no thermal or hardware slowdown of the GPU while measuring (power capping is reported apart)',
  },
  {
    id: 'preemptions',
    scope: 'level',
    title: 'Preemptions',
    guards: 'the engine preempted no request (only where its metrics say)',
  },
  {
    id: 'clock',
    scope: 'level',
    title: 'Clock',
    guards: "distributed runs: the workers' clocks, mapped onto rank 0's, are exact enough for a round's window",
  },
  {
    id: 'server',
    scope: 'run',
    title: 'Server',
    guards: 'the server became ready and stayed up for the whole run (a simulated engine warns)',
  },
] as const satisfies readonly CheckDeclaration[];

/** Whether a check judges one level (and is rolled up over levels for the run) or the run as a whole. */
export type CheckScope = 'level' | 'run';

/** One check as the catalog declares it. */
export interface CheckDeclaration {
  id: string;
  scope: CheckScope;
  title: string;
  /** What a pass guarantees, in one clause. */
  guards: string;
  /** It judges generated tokens or their stream: not shown for a pooling endpoint (embeddings, rerank). */
  generationOnly?: true;
}

/** Whether a check means anything for an endpoint kind: generation-only checks are not shown for pooling ones. */
export function checkApplies(id: CheckId, endpoint: EndpointKind): boolean {
  const declared: CheckDeclaration | undefined = CHECK_CATALOG.find((c) => c.id === id);
  return !(declared?.generationOnly === true && isPooling(endpoint));
}

/** A check's id (stable: run.json stores it). */
export type CheckId = (typeof CHECK_CATALOG)[number]['id'];

/** The catalog entry of an id; undefined for an id this version does not know (a newer run.json). */
export function checkDeclaration(id: string): CheckDeclaration | undefined {
  return CHECK_CATALOG.find((c) => c.id === id);
}
