import type { ResponseCache } from '../../shared/run-record.js';
import { fmtNum } from '../metrics/format.js';
import type { ImpossibleUsage } from '../metrics/usage-checks.js';
import { defineCheck } from './define.js';
import { verdict, type Facts, type Judged } from './verdict.js';

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

/** What the level's evidence on the prefix cache says, in words: the engine's counter first, else its responses. */
function cacheEvidence(hits: number | null, rc: ResponseCache | null): string {
  const engine = hits !== null ? `the engine reports ${fmtNum(hits)} prefix-cache hits` : null;
  if (rc === null) return engine ?? 'engine hit counter unavailable';
  const of = rc.requests < rc.of ? ` (${rc.requests} of ${rc.of} responses said)` : '';
  const responses = `the server's responses report ${fmtNum(rc.cachedTokens)} cached prompt tokens${of}`;
  // Both: the counter is scraped once a second, so a short level's delta can miss what the responses saw.
  return engine ? `${engine}; ${responses}` : responses;
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
  return verdict('prefix-cache', status, bad.code, { ...found.facts, ...bad.facts }, `${bad.detail}; ${found.detail}`);
}

/** The verdicts of a workload whose prompts share on purpose (groups, a trace, a file, multi-turn); null otherwise. */
function sharedOnPurpose(input: PrefixCacheInput, facts: Facts, seen: string): Judged | null {
  if (input.sharedPrefixes) {
    return verdict(
      'prefix-cache',
      'pass',
      'shared-on-purpose',
      facts,
      `requests share prompt prefixes on purpose (the rest of each prompt is unique); ${seen}`,
    );
  }
  if (input.promptsFromFile) {
    const repeats = input.repeatedRecords ?? 0;
    if (repeats > 0) {
      return verdict(
        'prefix-cache',
        'warn',
        'file-records-resent',
        { ...facts, repeatedRecords: repeats },
        `${repeats} requests resent a record of the prompt file already sent in this run (the file holds fewer records than the run sends): those may be served from the prefix cache (${seen}); use a longer file or fewer requests`,
      );
    }
    return verdict(
      'prefix-cache',
      'pass',
      'file-prompts',
      facts,
      `prompts come from the file as written, each record once: they share only what real prompts share (chat template, common openings); ${seen}`,
    );
  }
  if (!input.uniquePrefix) {
    return verdict(
      'prefix-cache',
      'warn',
      'unique-prefix-off',
      facts,
      `unique prompt prefixes were off: measuring the cached case, so TTFT is lower than for fresh prompts (${seen})`,
    );
  }
  if (input.multiTurn) {
    return verdict(
      'prefix-cache',
      'pass',
      'history-cached',
      facts,
      `every conversation starts with a unique prefix; later turns resend the history, so the prefix cache may serve it (that is what multi-turn measures): ${seen}`,
    );
  }
  return null;
}

function prefixCacheVerdict(input: PrefixCacheInput): Judged {
  const hits = input.prefixCacheHitsDelta ?? null;
  const rc = input.responseCache ?? null;
  const seen = cacheEvidence(hits, rc);
  const facts: Facts = {
    engineHits: hits,
    cachedTokens: rc?.cachedTokens ?? null,
    mostlyCachedRequests: rc?.mostlyCachedRequests ?? null,
  };
  const onPurpose = sharedOnPurpose(input, facts, seen);
  if (onPurpose) return onPurpose;
  // Per response, a few cached tokens are the opening every prompt shares (the chat template's, the first words).
  if (rc !== null && rc.mostlyCachedRequests > 0) {
    return verdict(
      'prefix-cache',
      'warn',
      'served-from-cache',
      facts,
      `${rc.mostlyCachedRequests} requests had half or more of their prompt past the shared opening served from the prefix cache by the server's own account despite unique prompts: their TTFT is that of the cached case`,
    );
  }
  const opening = input.openingTokens ?? null;
  const perRequest = hits !== null && (input.measuredRequests ?? 0) > 0 ? hits / input.measuredRequests! : null;
  const hitFacts = { ...facts, openingTokens: opening, hitsPerRequest: perRequest };
  if (hits !== null && hits > 0 && !(perRequest !== null && opening !== null && perRequest <= opening)) {
    return verdict(
      'prefix-cache',
      'warn',
      'engine-hits',
      hitFacts,
      `the engine reports ${fmtNum(hits)} prefix-cache hits despite unique prompts` +
        (perRequest !== null && opening !== null
          ? ` (${fmtNum(perRequest)} tokens per request, more than the ${opening}-token opening every prompt shares)`
          : '') +
        ': some requests may have reused cached prefill',
    );
  }
  const shared =
    opening !== null ? `the ${opening}-token opening` : rc !== null ? `the ${rc.openingTokens}-token opening` : null;
  return verdict(
    'prefix-cache',
    'pass',
    'unique',
    hitFacts,
    `every prompt starts with a unique prefix; ${seen}` +
      (shared !== null && ((hits ?? 0) > 0 || (rc?.cachedTokens ?? 0) > 0)
        ? `: no more than ${shared} every prompt shares (chat template, first words), which real traffic caches too`
        : ''),
  );
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
