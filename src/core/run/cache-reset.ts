import type { CacheResetResult } from '../../shared/run-record.js';
import type { CacheResetSpec } from '../servers/engines/types.js';

/** What resetting a server's prefix cache needs: the engine's endpoint (absent: it has none), where, and how to ask. */
export interface CacheResetInput {
  spec: CacheResetSpec | undefined;
  /** The engine's name in the line said when it has no reset (e.g. "llama.cpp"). */
  engineName: string;
  /** Base URLs to reset (every replica). */
  baseUrls: readonly string[];
  apiKey?: string;
  signal: AbortSignal;
  fetch?: typeof fetch;
}

const TIMEOUT_MS = 30_000;

/**
 * Empties the prefix cache of every replica before a level: done when each answered 2xx, not possible when the engine
 * has no such endpoint or it is not served (404, with the way round), failed with the first other answer.
 */
export async function resetPrefixCache(input: CacheResetInput): Promise<CacheResetResult> {
  const { spec } = input;
  if (!spec)
    return { status: 'not-possible', detail: `${input.engineName} has no endpoint that empties its prefix cache` };
  const fetchFn = input.fetch ?? fetch;
  for (const base of input.baseUrls) {
    const url = `${base.replace(/\/+$/, '')}${spec.path}`;
    let status: number;
    try {
      const res = await fetchFn(url, {
        method: 'POST',
        headers: input.apiKey ? { authorization: `Bearer ${input.apiKey}` } : {},
        signal: AbortSignal.any([input.signal, AbortSignal.timeout(TIMEOUT_MS)]),
      });
      status = res.status;
      await res.body?.cancel().catch(() => undefined);
    } catch (error) {
      if (input.signal.aborted) throw error;
      return { status: 'failed', detail: `POST ${url} got no answer (${(error as Error).message})` };
    }
    if (status === 404 || status === 405) return { status: 'not-possible', detail: `${url}: ${spec.notServed}` };
    if (status < 200 || status > 299)
      return { status: 'failed', detail: `POST ${url} answered HTTP ${status}: the level may ride on the cache` };
  }
  return { status: 'done' };
}
