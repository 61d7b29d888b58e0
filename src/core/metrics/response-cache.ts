import type { ResponseCache } from '../../shared/run-record.js';
import type { RequestRecord } from '../../shared/request-record.js';

/**
 * Prefix-cache use as the server's own responses report it (cached prompt tokens per request), over the ok measured
 * requests; null when no response reported any. The hit rate only when every one of them reported a count: vLLM
 * leaves the field out when it is 0, so a rate over the reporting ones alone would be too high.
 */
export function responseCacheOf(ok: readonly RequestRecord[]): ResponseCache | null {
  const reporting = ok.filter((r) => r.cachedPromptTokens !== undefined);
  if (reporting.length === 0) return null;
  const cachedTokens = reporting.reduce((a, r) => a + (r.cachedPromptTokens ?? 0), 0);
  const promptTokens = reporting.reduce((a, r) => a + (r.nIn ?? r.expectedIn), 0);
  const all = reporting.length === ok.length;
  // A shared chat-template opening is cached on any engine; half the prompt or more is a reused prompt.
  const mostlyCached = reporting.filter((r) => (r.cachedPromptTokens ?? 0) * 2 >= Math.max(1, r.nIn ?? r.expectedIn));
  return {
    requests: reporting.length,
    of: ok.length,
    cachedTokens,
    mostlyCachedRequests: mostlyCached.length,
    hitRate: all && promptTokens > 0 ? Math.min(1, cachedTokens / promptTokens) : null,
  };
}
