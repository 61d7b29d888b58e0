import type { ResponseCache } from '../../shared/run-record.js';
import type { ImpossibleUsage } from '../metrics/usage-checks.js';
import { defineCheck } from './define.js';
import { judged, type Facts, type Judged } from './verdict.js';

/** Inputs of the prefix-cache check. */
export interface PrefixCacheInput {
  uniquePrefix: boolean;
  /** Requests share prefixes on purpose (shared-prefix groups, trace hash ids): hits are the point, not a flaw. */
  sharedPrefixes?: boolean;
  /** Growth of the engine's prefix-cache hit counter over the level, when it exposes one. */
  prefixCacheHitsDelta?: number | null;
  /** Cached prompt tokens the server's responses reported (llama.cpp always; vLLM and SGLang behind a flag). */
  responseCache?: ResponseCache | null;
  /** Tokens of the opening every unique prompt shares (chat template, first words), by the server's count. */
  openingTokens?: number | null;
  /** Measured requests of the level: the engine's hits per request are compared with that opening. */
  measuredRequests?: number;
  /** Multi-turn level: later turns resend the history, so hits on it are the point, not a flaw. */
  multiTurn?: boolean;
  /** Prompts from a file, sent as written: they share what real prompts share, so some hits are the workload's. */
  promptsFromFile?: boolean;
  /** File prompts: measured requests whose record was already sent on this server configuration. */
  repeatedRecords?: number;
  /** Responses whose cached_tokens could not be true (left out of responseCache). */
  impossibleCached?: ImpossibleUsage | null;
}

/**
 * prefix-cache: prompts were unique, so no request rode on another's cache; warns on the cached case or on reported
 * hits, and where responses reported impossible cached_tokens (named first; they count nowhere).
 */
export function prefixCacheCheck(input: PrefixCacheInput): Judged {
  const found = prefixCacheVerdict(input);
  const bad = input.impossibleCached;
  if (!bad) return found;
  const status = found.status === 'fail' ? 'fail' : 'warn';
  return judged('prefix-cache', status, bad.code, { ...found.facts, ...bad.facts, verdictCode: found.code });
}

/** The verdicts of a workload whose prompts share on purpose (groups, a file, the cached case, multi-turn). */
function sharedOnPurpose(input: PrefixCacheInput, facts: Facts): Judged | null {
  if (input.sharedPrefixes) return judged('prefix-cache', 'pass', 'shared-on-purpose', facts);
  if (input.promptsFromFile) {
    const repeats = input.repeatedRecords ?? 0;
    return repeats > 0
      ? judged('prefix-cache', 'warn', 'file-records-resent', { ...facts, repeatedRecords: repeats })
      : judged('prefix-cache', 'pass', 'file-prompts', facts);
  }
  if (!input.uniquePrefix) return judged('prefix-cache', 'warn', 'unique-prefix-off', facts);
  if (input.multiTurn) return judged('prefix-cache', 'pass', 'history-cached', facts);
  return null;
}

function prefixCacheVerdict(input: PrefixCacheInput): Judged {
  const hits = input.prefixCacheHitsDelta ?? null;
  const rc = input.responseCache ?? null;
  const opening = input.openingTokens ?? null;
  const perRequest = hits !== null && (input.measuredRequests ?? 0) > 0 ? hits / input.measuredRequests! : null;
  const facts: Facts = {
    engineHits: hits,
    cachedTokens: rc?.cachedTokens ?? null,
    cacheResponses: rc?.requests ?? null,
    responses: rc?.of ?? null,
    mostlyCachedRequests: rc?.mostlyCachedRequests ?? null,
    // The opening every prompt shares: counted ahead, else as the responses saw it.
    openingTokens: opening,
    sharedOpeningTokens: opening ?? rc?.openingTokens ?? null,
    hitsPerRequest: perRequest,
  };
  const onPurpose = sharedOnPurpose(input, facts);
  if (onPurpose) return onPurpose;
  // Per response, a few cached tokens are the opening every prompt shares (the chat template's, the first words).
  if (rc !== null && rc.mostlyCachedRequests > 0) return judged('prefix-cache', 'warn', 'served-from-cache', facts);
  if (hits !== null && hits > 0 && !(perRequest !== null && opening !== null && perRequest <= opening)) {
    return judged('prefix-cache', 'warn', 'engine-hits', facts);
  }
  return judged('prefix-cache', 'pass', 'unique', facts);
}

export const prefixCache = defineCheck('prefix-cache', {
  limits: {},
  evaluate: (e) =>
    prefixCacheCheck({
      ...e.prompts,
      prefixCacheHitsDelta: e.prefixCacheHitsDelta,
      responseCache: e.responseCache,
      measuredRequests: e.measured.length,
      impossibleCached: e.impossibleCached,
    }),
});
