import type { RequestRecord } from '../../shared/request-record.js';
import type { StreamResult } from './stream-accumulator.js';

/**
 * The reasoning fields of a request record: TTFO's chunk, and reasoning vs answer tokens, from the server's
 * reasoning_tokens when it gives a plausible one (SGLang before its fix always said 0), else from the chunks.
 */
export function reasoningFields(
  r: StreamResult,
  nOut: number,
): Pick<RequestRecord, 'firstContentMs' | 'nReasoning' | 'nContent' | 'nReasoningSource'> {
  const server = r.reasoningTokens;
  const plausible = server !== null && server > 0 && server <= nOut && r.completionTokens !== null;
  if (plausible) {
    return {
      firstContentMs: r.firstContentMs,
      nReasoning: server,
      nContent: nOut - server,
      nReasoningSource: 'server',
    };
  }
  // The split is estimated, the total is not: the answer is what the server's total leaves after the reasoning chunks.
  const nReasoning = r.completionTokens !== null ? Math.min(r.reasoningChunkTokens, nOut) : r.reasoningChunkTokens;
  const nContent = r.completionTokens !== null ? nOut - nReasoning : r.contentChunkTokens;
  return { firstContentMs: r.firstContentMs, nReasoning, nContent, nReasoningSource: 'estimated' };
}
