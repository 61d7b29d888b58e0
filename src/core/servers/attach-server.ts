import type { ServerConfig } from '../../shared/config.js';
import type { RunEvent } from '../../shared/events.js';
import { badAnswerProblem, isRedirect, redirectProblem } from '../http-answers.js';
import { abortError, failStart, ServerConfigError } from './server-errors.js';
import {
  answer,
  apiKeyFailure,
  discoverVersion,
  httpGet,
  type HttpResult,
  listModels,
  normalizeBaseUrl,
  notOpenAiFailure,
  urlCredentialsProblem,
} from './http-probe.js';
import { createAttachWatch, type AttachWatch } from './attach-watch.js';
import { replicaUrls } from '../../shared/replicas.js';
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
  /** ms between the probes that watch the server between levels (default 1 s). */
  watchMs?: number;
}

/** Waits until a running server answers as an OpenAI-compatible one, then names its model; never stops it. */
export async function attachServer(
  config: ServerConfig,
  opts: StartServerOptions,
  emit: (event: RunEvent) => void,
  deps: AttachDeps,
): Promise<RunningServer> {
  const urls = replicaUrls(config.url);
  if (urls.length === 0) throw new ServerConfigError('attaching to a server needs --url');
  for (const url of urls) {
    const credentials = urlCredentialsProblem(url);
    if (credentials) throw new ServerConfigError(credentials);
  }
  const fetchFn = deps.fetch;
  const clock = deps.clock ?? realClock;
  const lifecycle = new Lifecycle(ATTACH_TRANSITIONS, emit);
  const fail: (failure: ServerFailure) => never = (failure) => failStart(lifecycle, failure);
  const baseUrl = normalizeBaseUrl(urls[0] as string);
  lifecycle.to('checking', `waiting for ${baseUrl}`);
  const { simulator, readyPath } = await waitAnswering({ config, opts, deps, baseUrl, clock, lifecycle, fail });
  const refuseOdd = (path: string, res: HttpResult): void => {
    const failure = oddAnswer(baseUrl, path, res);
    if (failure) fail(failure);
  };
  const listed = await listModels(fetchFn, baseUrl, opts.apiKey);
  if (isRedirect(listed.status)) refuseOdd('/v1/models', listed);
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
  if (urls.length > 1) info.replicaUrls = await checkReplicas(urls.map(normalizeBaseUrl), model, opts, deps, fail);
  lifecycle.to('ready', `${baseUrl} (${model})${urls.length > 1 ? ` and ${urls.length - 1} more replicas` : ''}`);
  const watch = createAttachWatch(baseUrl, readyPath, {
    fetch: fetchFn,
    clock,
    pollMs: deps.watchMs ?? 1_000,
    comebackMs: deps.connectTimeoutMs,
    readyTimeoutMs: config.startTimeoutMs,
    apiKey: opts.apiKey,
  });
  return watchedServer(info, watch);
}

/**
 * The replicas after the first: each must answer /v1/models now and list the model the first one serves (a replica
 * of another model is no replica); their base URLs, the first included, in --url order.
 */
async function checkReplicas(
  urls: string[],
  model: string,
  opts: StartServerOptions,
  deps: AttachDeps,
  fail: (failure: ServerFailure) => never,
): Promise<string[]> {
  for (const url of urls.slice(1)) {
    const listed = await listModels(deps.fetch, url, opts.apiKey);
    if (listed.status !== 200)
      fail({
        kind: 'unreachable',
        message: `replica ${url} does not answer /v1/models (${listed.status === undefined ? 'no connection' : `HTTP ${listed.status}`})`,
        fix: 'start that replica, or leave it out of --url',
        logTail: [],
      });
    if (listed.ids.length > 0 && !listed.ids.includes(model))
      fail({
        kind: 'model-not-found',
        message: `replica ${url} serves ${listed.ids.join(', ')}, not '${model}' as the first does`,
        fix: 'give --url replicas of one model only',
        logTail: [],
      });
  }
  return urls;
}

/** What the readiness wait needs of attachServer. */
interface AttachContext {
  config: ServerConfig;
  opts: StartServerOptions;
  deps: AttachDeps;
  baseUrl: string;
  clock: WaitClock;
  lifecycle: Lifecycle;
  fail: (failure: ServerFailure) => never;
}

/**
 * Polls /health (or /v1/models where there is none) until the server answers ready: whether any answer came from
 * servebench's simulator, and the path that said ready (the watch asks it again between levels).
 */
async function waitAnswering(ctx: AttachContext): Promise<{ simulator: boolean; readyPath: string }> {
  const { config, opts, deps, baseUrl, clock, lifecycle, fail } = ctx;
  const fetchFn = deps.fetch;
  const signal = opts.signal;
  const connectDeadline = clock.now() + deps.connectTimeoutMs;
  const deadline = clock.now() + config.startTimeoutMs;
  let lastSeen = '';
  // Any answer of `servebench sim` says so (a proxy may answer some paths itself, so every probe counts).
  let simulator = false;
  const refuseOdd = (path: string, res: HttpResult): void => {
    const failure = oddAnswer(baseUrl, path, res);
    if (failure) fail(failure);
  };
  // The path that said ready: the watch between levels asks it again.
  let readyPath = '/health';
  for (;;) {
    if (signal?.aborted) throw abortError(signal);
    const health = await httpGet(fetchFn, `${baseUrl}/health`, { signal, apiKey: opts.apiKey });
    simulator ||= health.simulator === true;
    readyPath = '/health';
    if (health.status === 200) return { simulator, readyPath };
    // A /health that redirects is no /health (a proxy's landing page): /v1/models, the API itself, decides below.
    if (health.status === undefined && !signal?.aborted) refuseOdd('/health', health);
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
      readyPath = '/v1/models';
      if (models.status === 200) return { simulator, readyPath };
      if (signal?.aborted) throw abortError(signal);
      refuseOdd('/v1/models', models);
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

/** A server that answered, but elsewhere (a redirect) or with what no client takes (huge headers): said at once. */
function oddAnswer(baseUrl: string, path: string, res: HttpResult): ServerFailure | null {
  const problem = isRedirect(res.status)
    ? redirectProblem(res.status!, res.location, `${baseUrl}${path}`, path)
    : res.status === undefined
      ? badAnswerProblem(res.code)
      : null;
  return problem
    ? { kind: 'not-openai', ...problem, message: `${baseUrl}${path}: ${problem.message}`, logTail: [] }
    : null;
}

/** The attached server as the run sees it: its death is the watch's to tell, and it is not ours to stop. */
function watchedServer(info: ServerInfo, watch: AttachWatch): RunningServer {
  return {
    info,
    died: watch.died,
    exited: false,
    hasDied: () => watch.hasDied(),
    watch,
    stop: async () => watch.stop(),
    logTail: () => [],
  };
}
