import { SIMULATOR_HEADER } from '../sim/http.js';
import type { ServerFailure } from './types.js';

/** One HTTP answer: the status, or the error code when there was none. */
export interface HttpResult {
  status?: number;
  code?: string;
  body?: string;
  /** A redirect's Location (probes follow none: the server at --url is the one measured). */
  location?: string;
  /** The answer came from servebench's own simulator (its header). */
  simulator?: boolean;
}

/** Most of a probe's body read (decoded): a model list or a version is far smaller. */
const MAX_PROBE_BODY = 4 << 20;

/** The body as text, at most `max` bytes of it (fetch decodes gzip/br lazily, so a bomb costs only what is read). */
async function boundedText(res: Response, max: number): Promise<string> {
  if (!res.body) return '';
  const reader = res.body.getReader();
  const parts: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    parts.push(value);
    size += value.length;
    if (size >= max) {
      await reader.cancel().catch(() => undefined);
      break;
    }
  }
  return Buffer.concat(parts).subarray(0, max).toString('utf8');
}

/** GET a URL with a time-out: the status (and body when asked), or the error code; never throws. */
export async function httpGet(
  fetchFn: typeof fetch,
  url: string,
  options: { timeoutMs?: number; signal?: AbortSignal; apiKey?: string; body?: boolean } = {},
): Promise<HttpResult> {
  const signals = [AbortSignal.timeout(options.timeoutMs ?? 3_000)];
  if (options.signal) signals.push(options.signal);
  try {
    const res = await fetchFn(url, {
      signal: AbortSignal.any(signals),
      headers: options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {},
      redirect: 'manual',
    });
    const body = options.body ? await boundedText(res, MAX_PROBE_BODY) : undefined;
    if (!options.body) await res.body?.cancel().catch(() => undefined);
    const location = res.headers.get('location');
    return {
      status: res.status,
      body,
      ...(location !== null ? { location } : {}),
      ...(res.headers.has(SIMULATOR_HEADER) ? { simulator: true } : {}),
    };
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    const name = (error as { name?: string }).name;
    // fetch refuses the "bad ports" of the Fetch standard (e.g. 9, 6000) without trying to connect.
    if (cause?.message === 'bad port')
      return { code: 'a port that fetch refuses to connect to: serve on another port' };
    return { code: cause?.code ?? (name === 'TimeoutError' || name === 'AbortError' ? 'ETIMEDOUT' : 'EFETCH') };
  }
}

async function getJson(fetchFn: typeof fetch, url: string, apiKey?: string): Promise<unknown> {
  const res = await httpGet(fetchFn, url, { body: true, apiKey, timeoutMs: 5_000 });
  if (res.status !== 200 || res.body === undefined) return undefined;
  try {
    return JSON.parse(res.body) as unknown;
  } catch {
    return undefined;
  }
}

/** GET /v1/models: the HTTP status and the model ids listed (none when it did not answer 200 with JSON). */
export async function listModels(
  fetchFn: typeof fetch,
  baseUrl: string,
  apiKey?: string,
): Promise<{ status?: number; ids: string[]; simulator?: boolean; location?: string }> {
  const res = await httpGet(fetchFn, `${baseUrl}/v1/models`, { body: true, apiKey, timeoutMs: 5_000 });
  let json: { data?: Array<{ id?: unknown }> } | undefined;
  try {
    json = res.status === 200 && res.body !== undefined ? (JSON.parse(res.body) as typeof json) : undefined;
  } catch {
    json = undefined;
  }
  const data = Array.isArray(json?.data) ? json.data : [];
  const ids = data.map((m) => m?.id).filter((id): id is string => typeof id === 'string');
  return {
    status: res.status,
    ids,
    ...(res.simulator ? { simulator: true } : {}),
    ...(res.location !== undefined ? { location: res.location } : {}),
  };
}

/** The model ids GET /v1/models lists (none when it did not answer). */
export async function discoverModels(fetchFn: typeof fetch, baseUrl: string, apiKey?: string): Promise<string[]> {
  return (await listModels(fetchFn, baseUrl, apiKey)).ids;
}

/** An answer in words for messages: the status, else the error code. */
export const answer = (res: HttpResult): string =>
  res.status !== undefined ? String(res.status) : (res.code ?? 'no answer');

/** attach: the URL answers HTTP, but not as an OpenAI-compatible server (wrong port, or a path on another web server). */
export function notOpenAiFailure(baseUrl: string, health: HttpResult, models: HttpResult): ServerFailure {
  const seen =
    health.status === 404 && models.status === 404
      ? '/health and /v1/models answer 404'
      : `/health answers ${answer(health)}, /v1/models ${answer(models)}`;
  return {
    kind: 'not-openai',
    message: `nothing OpenAI-compatible at ${baseUrl} (${seen})`,
    fix: 'check --url (host, port, and no /v1 suffix)',
    logTail: [],
  };
}

/** The server refuses requests without a valid API key. */
export const apiKeyFailure = (baseUrl: string, status: number): ServerFailure => ({
  kind: 'unreachable',
  message: `${baseUrl} refuses requests without a valid API key (HTTP ${status})`,
  fix: 'pass the server API key (--api-key)',
  logTail: [],
});

/** The version GET /version reports (vLLM, the simulator), if any. */
export async function discoverVersion(
  fetchFn: typeof fetch,
  baseUrl: string,
  apiKey?: string,
): Promise<string | undefined> {
  const json = (await getJson(fetchFn, `${baseUrl}/version`, apiKey)) as { version?: unknown } | undefined;
  return typeof json?.version === 'string' ? json.version : undefined;
}

/**
 * Why a server URL that carries a user name or password is refused, in one line (the password masked); null
 * for one without. Refused rather than sent as Basic auth: fetch will not send a URL with credentials, each
 * request has one Authorization header and it carries --api-key (Bearer, as OpenAI-compatible servers take
 * it), and the URL is printed and recorded in run.json, where a password does not belong.
 */
export function urlCredentialsProblem(url: string, flag = '--url'): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return null;
  }
  if (!parsed.username && !parsed.password) return null;
  if (parsed.password) parsed.password = '***';
  return `${flag} ${parsed.toString()}: a user name or password in the URL is not sent (one Authorization header carries --api-key): drop the user:password@ part; a server that checks a key takes --api-key`;
}

/** Base URL of an OpenAI-compatible server from what a user typed (trailing / and /v1 removed). */
export function normalizeBaseUrl(url: string): string {
  return url.replace(/\/+$/, '').replace(/\/v1$/, '');
}
