import { describe, expect, it } from 'vitest';
import { responseCacheOf } from '../../../src/core/metrics/response-cache.js';
import { streamed } from './make-record.js';

const rec = (nIn: number, cached?: number) =>
  streamed({}, { nIn, expectedIn: nIn, ...(cached !== undefined ? { cachedPromptTokens: cached } : {}) });

describe('responseCacheOf', () => {
  it('is null when no response reported cached tokens', () => {
    expect(responseCacheOf([rec(100), rec(100)])).toBeNull();
    expect(responseCacheOf([])).toBeNull();
  });

  it('gives the hit rate over prompt tokens when every response reported, and counts reuse past the opening', () => {
    // Opening 31 tokens (counted): 600 cached of 1000 is 569 of the 969 past it (reuse); 500 is 469 (not half).
    const rc = responseCacheOf([rec(1000, 31), rec(1000, 31), rec(1000, 600), rec(1000, 500)], 31);
    expect(rc).toEqual({
      requests: 4,
      of: 4,
      cachedTokens: 1162,
      openingTokens: 31,
      openingCounted: true,
      mostlyCachedRequests: 1,
      hitRate: 0.2905,
    });
  });

  it('takes short prompts whose cached tokens are the shared opening as no reuse', () => {
    // 64-token prompts behind a 31-token opening (Llama-3 template and first words): half the prompt, all shared.
    const rc = responseCacheOf([rec(64, 0), rec(64, 31), rec(64, 31), rec(64, 31)], 31);
    expect(rc?.mostlyCachedRequests).toBe(0);
  });

  it('estimates the opening as the lower quartile of cached tokens when the server did not count it', () => {
    const rc = responseCacheOf([rec(128, 69), rec(128, 69), rec(128, 69), rec(128, 69), rec(128, 127)]);
    expect(rc).toMatchObject({ openingTokens: 69, openingCounted: false, mostlyCachedRequests: 1 });
  });

  it('gives no hit rate when some responses said nothing (vLLM leaves out a 0)', () => {
    const rc = responseCacheOf([rec(1000, 800), rec(1000), rec(1000)], 16);
    expect(rc).toMatchObject({ requests: 1, of: 3, cachedTokens: 800, mostlyCachedRequests: 1, hitRate: null });
  });
});
