import { httpGet } from './http-probe.js';
import type { HttpResult } from './http-probe.js';
import type { WaitClock } from './readiness.js';
import type { LevelWatch, ServerFailure } from './types.js';

/** Collaborators of the watch over an attached server. */
export interface AttachWatchDeps {
  fetch: typeof fetch;
  clock: WaitClock;
  /** ms between probes while no level runs. */
  pollMs: number;
  /** How long a server found gone when a level is due may take to accept connections again (a supervisor restarting it). */
  comebackMs: number;
  /** How long a server that came back may take to answer its readiness path with 200 again. */
  readyTimeoutMs: number;
  apiKey?: string;
}

/** The watch over an attached server: its death (as a launched engine's exit), and outages between levels. */
export interface AttachWatch extends LevelWatch {
  readonly died: Promise<ServerFailure>;
  hasDied(): ServerFailure | null;
  stop(): void;
}

/** Codes that say nothing listens at the address any more (a time-out says only that it is slow). */
const GONE = new Set(['ECONNREFUSED', 'ECONNRESET', 'UND_ERR_SOCKET', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND']);
const isGone = (res: HttpResult): boolean => res.status === undefined && GONE.has(res.code ?? '');

const seconds = (ms: number): string => `${Math.max(1, Math.round(ms / 1000))} s`;

/**
 * Watches the server at `baseUrl` (ready when `readyPath` answers 200): a request refused during a level is its
 * death, at once, as a launched engine's exit is; between levels it is probed every pollMs, and before the next level
 * one that went away is either back within comebackMs and ready again (and said, in the line levelStarting returns)
 * or dead. A restart quicker than one poll goes unseen.
 */
export function createAttachWatch(baseUrl: string, readyPath: string, deps: AttachWatchDeps): AttachWatch {
  const { clock } = deps;
  let failure: ServerFailure | null = null;
  let resolveDied: (f: ServerFailure) => void = () => undefined;
  const died = new Promise<ServerFailure>((resolve) => (resolveDied = resolve));
  let polling: AbortController | null = null;
  let downSince: number | null = null;
  let outage: { from: number; to: number } | null = null;
  let stopped = false;

  const die = (how: string): void => {
    if (failure || stopped) return;
    failure = {
      kind: 'unreachable',
      message: `the attached server at ${baseUrl} stopped answering (${how})`,
      fix: 'check the server and its log; a restarted server starts cold, so measure it in a new run',
      logTail: [],
    };
    resolveDied(failure);
  };
  const probe = (signal?: AbortSignal, timeoutMs = 2_000): Promise<HttpResult> =>
    httpGet(deps.fetch, `${baseUrl}${readyPath}`, { timeoutMs, signal, apiKey: deps.apiKey });
  const poll = async (signal: AbortSignal): Promise<void> => {
    while (!signal.aborted) {
      await clock.sleep(deps.pollMs, signal);
      if (signal.aborted) return;
      const res = await probe(signal);
      if (signal.aborted) return;
      if (isGone(res)) downSince ??= clock.now();
      else if (downSince !== null) {
        outage = { from: downSince, to: clock.now() };
        downSince = null;
      }
    }
  };
  /** Waits (at most readyTimeoutMs) for a server that came back to answer its readiness path with 200. */
  const ready = async (signal?: AbortSignal): Promise<boolean> => {
    const deadline = clock.now() + deps.readyTimeoutMs;
    for (;;) {
      const res = await probe(signal, 5_000);
      if (res.status === 200) return true;
      if (signal?.aborted || clock.now() >= deadline) return false;
      await clock.sleep(deps.pollMs, signal);
    }
  };

  return {
    died,
    hasDied: () => failure,
    requestRefused: () => die('a request was refused: nothing listens there now'),
    levelEnded() {
      if (stopped || failure || polling) return;
      polling = new AbortController();
      void poll(polling.signal);
    },
    async levelStarting(signal) {
      polling?.abort();
      polling = null;
      if (failure || stopped) return null;
      let now = await probe(signal);
      if (isGone(now)) {
        downSince ??= clock.now();
        const deadline = clock.now() + deps.comebackMs;
        while (isGone(now) && clock.now() < deadline && !signal?.aborted) {
          await clock.sleep(deps.pollMs, signal);
          now = await probe(signal);
        }
      }
      if (signal?.aborted) return null;
      if (isGone(now)) {
        die(`${now.code ?? 'no connection'} between levels, for over ${seconds(deps.comebackMs)}`);
        return null;
      }
      const seen = outage ?? (downSince !== null ? { from: downSince, to: clock.now() } : null);
      outage = null;
      downSince = null;
      if (!seen) return null;
      if (!(await ready(signal))) {
        if (!signal?.aborted)
          die(`it went away between levels and was not ready again within ${seconds(deps.readyTimeoutMs)}`);
        return null;
      }
      return `the attached server at ${baseUrl} did not answer for about ${seconds(seen.to - seen.from)} between levels and answers again: it may have restarted (a restarted server starts with cold caches); the levels from here on measure it as it is now`;
    },
    stop() {
      stopped = true;
      polling?.abort();
      polling = null;
    },
  };
}
