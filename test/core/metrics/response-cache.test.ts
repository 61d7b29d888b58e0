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

  it('gives the hit rate over prompt tokens when every response reported, and counts mostly-cached requests', () => {
    const rc = responseCacheOf([rec(1000, 12), rec(1000, 12), rec(1000, 600), rec(1000, 500)]);
    expect(rc).toEqual({ requests: 4, of: 4, cachedTokens: 1124, mostlyCachedRequests: 2, hitRate: 0.281 });
  });

  it('gives no hit rate when some responses said nothing (vLLM leaves out a 0)', () => {
    const rc = responseCacheOf([rec(1000, 800), rec(1000), rec(1000)]);
    expect(rc).toEqual({ requests: 1, of: 3, cachedTokens: 800, mostlyCachedRequests: 1, hitRate: null });
  });
});
