import type { RunEvent } from '../../shared/events.js';
import type { EngineModule } from './engines/index.js';
import type { ServerInfo } from './types.js';

/** Reads the start-up milestones of one log line into `info` and reports them (each message once in a row). */
export function logFactsReader(
  adapter: EngineModule,
  info: ServerInfo,
  emit: (event: RunEvent) => void,
): (line: string) => void {
  let lastProgress = '';
  return (line) => {
    for (const p of adapter.progress) {
      const m = line.match(p.pattern);
      if (!m) continue;
      const value = p.value?.(m);
      if (p.key === 'kv-cache' && value !== undefined) info.kvCacheTokens = value;
      if (p.key === 'max-concurrency' && value !== undefined) {
        info.maxConcurrency = value;
        const tokens = p.perRequestTokens?.(m);
        if (tokens !== undefined && tokens > 0) info.maxConcurrencyTokens = tokens;
        else delete info.maxConcurrencyTokens;
      }
      if (p.key === 'max-running-requests' && value !== undefined) {
        info.maxRunningRequests = value;
        if (info.maxConcurrency === undefined) info.maxConcurrency = value;
      }
      const message = p.message(m);
      // Engines print some milestones twice (uvicorn and the app both announce the HTTP server): say it once.
      if (message === lastProgress) continue;
      lastProgress = message;
      emit({ type: 'server-progress', key: p.key, message, ...(value !== undefined ? { value } : {}) });
    }
  };
}
