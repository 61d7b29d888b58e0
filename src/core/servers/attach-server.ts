import type { ServerConfig } from '../../shared/config.js';
import type { RunEvent } from '../../shared/events.js';
import { abortError, failStart, ServerConfigError } from './server-errors.js';
import {
  answer,
  apiKeyFailure,
  discoverVersion,
  httpGet,
  listModels,
  normalizeBaseUrl,
  notOpenAiFailure,
} from './http-probe.js';
import { ATTACH_TRANSITIONS, Lifecycle } from './lifecycle-state.js';
import { realClock, type WaitClock } from './readiness.js';
import type { RunningServer, ServerFailure, ServerInfo, StartServerOptions } from './types.js';

/** Collaborators of attach (tests pass fakes and a clock). */
export interface AttachDeps {
  fetch: typeof fetch;
  pollMs: number;
  /** How long a server may refuse connections before it counts as unreachable. */
  connectTimeoutMs: number;
  clock?: WaitClock;
}

/**
 * Polls /health (or /v1/models where /health is missing or guarded) until the server answers as an OpenAI-compatible
 * one; fails on what cannot change (no such host, an API key refused, another web server) or at the time-out.
 * Returns whether any answer came from `servebench sim`.
 */
async function waitAttached(
  config: ServerConfig,
  opts: StartServerOptions,
  ctx: { baseUrl: string; lifecycle: Lifecycle; deps: AttachDeps },
): Promise<boolean> {
  const { baseUrl, lifecycle, deps } = ctx;
  const fetchFn = deps.fetch;
  const clock = deps.clock ?? realClock;
  const fail: (failure: ServerFailure) => never = (failure) => failStart(lifecycle, failure);
  const signal = opts.signal;
  const connectDeadline = clock.now() + deps.connectTimeoutMs;
  const deadline = clock.now() + config.startTimeoutMs;
  let lastSeen = '';
  // Any answer of `servebench sim` says so (a proxy may answer some paths itself, so every probe counts).
  let simulator = false;
  for (;;) {
    if (signal?.aborted) throw abortError(signal);
    const health = await httpGet(fetchFn, `${baseUrl}/health`, { signal, apiKey: opts.apiKey });
    simulator ||= health.simulator === true;
    if (health.status === 200) return simulator;
    if (health.status === undefined) {
      if (signal?.aborted) throw abortError(signal);
      if (health.code === 'ENOTFOUND' || health.code === 'EAI_AGAIN' || clock.now() >= connectDeadline) {
        fail({
          kind: 'unreachable',
          message: `nothing answers at ${baseUrl} (${health.code ?? 'no connection'})`,
          fix: 'is the server running? check --url (scheme, host and port)',
          logTail: [],
        });
      }
    } else if (health.status >= 500) {
      // 503 while loading (vLLM, SGLang, TGI): wait.
      lastSeen = `/health answered ${health.status}`;
      lifecycle.to('loading', lastSeen);
    } else {
      // No /health (404: Ollama, many proxies) or one behind auth: /v1/models decides.
      const models = await httpGet(fetchFn, `${baseUrl}/v1/models`, { signal, apiKey: opts.apiKey });
      simulator ||= models.simulator === true;
      if (models.status === 200) return simulator;
      if (signal?.aborted) throw abortError(signal);
      if (models.status === 401 || models.status === 403) fail(apiKeyFailure(baseUrl, models.status));
      lastSeen = `/health answered ${health.status}, /v1/models ${answer(models)}`;
      if (models.status === undefined || models.status < 500) {
        // Not loading (that is 5xx): another web server, or a wrong path. Both 404: certainly; else after a grace.
        if ((health.status === 404 && models.status === 404) || clock.now() >= connectDeadline) {
          fail(notOpenAiFailure(baseUrl, health, models));
        }
      }
      lifecycle.to('loading', lastSeen);
    }
    if (clock.now() >= deadline) {
      fail({
        kind: 'timeout',
        message: `${baseUrl} was not ready within ${Math.round(config.startTimeoutMs / 1000)} s${lastSeen ? ` (${lastSeen})` : ''}`,
        fix: 'check the server, or allow it longer with --start-timeout',
        logTail: [],
      });
    }
    await clock.sleep(deps.pollMs, signal);
  }
}

/** Waits until a running server answers as an OpenAI-compatible one, then names its model; never stops it. */
export async function attachServer(
  config: ServerConfig,
  opts: StartServerOptions,
  emit: (event: RunEvent) => void,
  deps: AttachDeps,
): Promise<RunningServer> {
  if (!config.url) throw new ServerConfigError('attaching to a server needs --url');
  const fetchFn = deps.fetch;
  const lifecycle = new Lifecycle(ATTACH_TRANSITIONS, emit);
  const fail: (failure: ServerFailure) => never = (failure) => failStart(lifecycle, failure);
  const baseUrl = normalizeBaseUrl(config.url);
  lifecycle.to('checking', `waiting for ${baseUrl}`);
  const simulator = await waitAttached(config, opts, { baseUrl, lifecycle, deps });
  const listed = await listModels(fetchFn, baseUrl, opts.apiKey);
  // vLLM --api-key leaves /health open but guards /v1: without the key every request would fail.
  if (listed.status === 401 || listed.status === 403) fail(apiKeyFailure(baseUrl, listed.status));
  const models = listed.ids;
  const model = config.servedModelName ?? config.model ?? models[0];
  if (!model) {
    fail({
      kind: 'model-not-found',
      message: `${baseUrl}/v1/models lists no model`,
      fix: 'name the model with --model',
      logTail: [],
    });
  }
  if (models.length > 0 && !models.includes(model)) {
    emit({
      type: 'message',
      severity: 'warn',
      text: `model '${model}' is not among the server's models (${models.join(', ')})`,
    });
  }
  const engineVersion = await discoverVersion(fetchFn, baseUrl, opts.apiKey);
  const metrics = await httpGet(fetchFn, `${baseUrl}/metrics`, { apiKey: opts.apiKey });
  const info: ServerInfo = {
    engine: config.engine,
    baseUrl,
    model,
    // `servebench sim` behind --url: its numbers are simulated whatever engine it mimics.
    simulated: simulator || listed.simulator === true || metrics.simulator === true,
    ...(engineVersion ? { engineVersion } : {}),
    ...(metrics.status === 200 ? { metricsUrl: `${baseUrl}/metrics` } : {}),
  };
  lifecycle.to('ready', `${baseUrl} (${model})`);
  return {
    info,
    died: new Promise<ServerFailure>(() => undefined),
    exited: false,
    hasDied: () => null,
    stop: async () => undefined,
    logTail: () => [],
  };
}
