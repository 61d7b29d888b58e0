import type { ResponseCache } from '../../shared/run-record.js';
import type { RequestRecord } from '../../shared/request-record.js';
import { percentile } from './percentiles.js';

/**
 * Prefix-cache use as the server's own responses report it (cached prompt tokens per request), over the ok measured
 * requests; null when no response reported any. The hit rate only when every one of them reported a count: vLLM
 * leaves the field out when it is 0, so a rate over the reporting ones alone would be too high. A request counts as
 * reusing a cached prompt when at least half of what follows the opening every prompt shares came from the cache;
 * `openingTokens` is that opening by the server's count, else the level's lower quartile of cached tokens.
 */
export function responseCacheOf(
  ok: readonly RequestRecord[],
  openingTokens: number | null = null,
): ResponseCache | null {
  const reporting = ok.filter((r) => r.cachedPromptTokens !== undefined);
  if (reporting.length === 0) return null;
  const cached = reporting.map((r) => r.cachedPromptTokens ?? 0);
  const cachedTokens = cached.reduce((a, b) => a + b, 0);
  const promptTokens = reporting.reduce((a, r) => a + (r.nIn ?? r.expectedIn), 0);
  const all = reporting.length === ok.length;
  const opening =
    openingTokens ??
    percentile(
      [...cached].sort((a, b) => a - b),
      25,
    );
  const reused = reporting.filter((r) => {
    const nIn = r.nIn ?? r.expectedIn;
    const past = (r.cachedPromptTokens ?? 0) - opening;
    return past > 0 && past * 2 >= Math.max(1, nIn - opening);
  });
  return {
    requests: reporting.length,
    of: ok.length,
    cachedTokens,
    openingTokens: Math.round(opening),
    openingCounted: openingTokens !== null,
    mostlyCachedRequests: reused.length,
    hitRate: all && promptTokens > 0 ? Math.min(1, cachedTokens / promptTokens) : null,
  };
}
