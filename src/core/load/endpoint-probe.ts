import { isPooling, type EndpointKind } from '../../shared/endpoint-kinds.js';
import type { RunEvent } from '../../shared/events.js';
import { poolingCounter, probePooling } from './pooling-api.js';
import { FULL_COMPAT, type BodyCompat } from './request-body.js';
import type { PromptCounting, ServerApi } from './server-api.js';

/**
 * Learns what the server takes for the run's endpoint kind before any level: for a generation, which optional body
 * fields it accepts and how it counts prompts; for a pooling kind, that it serves the endpoint and how it counts
 * one input. Every refusal is one line naming the fix.
 */
export async function probeEndpoint(
  api: ServerApi,
  base: string,
  kind: EndpointKind,
  model: string,
  signal: AbortSignal,
  emit: (event: RunEvent) => void,
): Promise<{ compat: BodyCompat; counting: PromptCounting }> {
  if (isPooling(kind)) {
    await probePooling(api, base, kind, model, signal);
    return { compat: FULL_COMPAT, counting: await poolingCounter(api, kind, model, signal) };
  }
  const { compat, note } = await api.probeCompat(kind, model, signal);
  if (note) emit({ type: 'message', severity: 'warn', text: note });
  return { compat, counting: await api.tokenCounter(kind, model, compat, signal) };
}
