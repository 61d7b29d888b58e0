import { request } from 'undici';
import { UserError } from '../errors.js';
import type { TokenCounter } from './prompts.js';
import { FULL_COMPAT, apiPath, buildRequestBody } from './request-body.js';
import type { BodyCompat } from './request-body.js';

export interface ServerApiOptions {
  baseUrl: string;
  apiKey?: string;
  /** ms before a small control call (tokenize, probe) gives up. */
  timeoutMs?: number;
}

interface JsonResponse {
  status: number;
  json: unknown;
  text: string;
}

/** Small non-streaming calls to an OpenAI-compatible server: model list, tokenize, probe. */
export class ServerApi {
  private readonly base: string;
  private readonly headers: Record<string, string>;
  private readonly timeoutMs: number;

  constructor(options: ServerApiOptions) {
    this.base = options.baseUrl.replace(/\/+$/, '');
    this.headers = { 'content-type': 'application/json' };
    if (options.apiKey) this.headers.authorization = `Bearer ${options.apiKey}`;
    this.timeoutMs = options.timeoutMs ?? 30_000;
  }

  /** GET or POST JSON; network errors become a UserError naming the URL. */
  async call(method: 'GET' | 'POST', path: string, body?: unknown): Promise<JsonResponse> {
    let res;
    try {
      res = await request(this.base + path, {
        method,
        headers: this.headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        headersTimeout: this.timeoutMs,
        bodyTimeout: this.timeoutMs,
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (error) {
      const code = (error as { code?: string }).code ?? (error as Error).name;
      throw new UserError(
        `cannot reach ${this.base} (${code}): is the server running and is --url right (scheme, host, port)?`,
      );
    }
    const text = await res.body.text();
    let json: unknown = null;
    try {
      json = JSON.parse(text);
    } catch {
      json = null;
    }
    return { status: res.statusCode, json, text };
  }

  /**
   * A token counter: vLLM-style POST /tokenize when the server has it (exact, no side effects), otherwise
   * a one-token request whose usage.prompt_tokens tells the count (`exact` false: it fills the prefix cache).
   */
  async tokenCounter(
    api: 'chat' | 'completions',
    model: string,
    compat: BodyCompat,
  ): Promise<{ counter: TokenCounter; viaTokenize: boolean }> {
    const tokenizeBody = (text: string): Record<string, unknown> =>
      api === 'chat'
        ? { model, messages: [{ role: 'user', content: text }], add_generation_prompt: true }
        : { model, prompt: text };
    const probe = await this.call('POST', '/tokenize', tokenizeBody('hello'));
    const probeCount = (probe.json as { count?: unknown } | null)?.count;
    if (probe.status === 200 && typeof probeCount === 'number') {
      return {
        viaTokenize: true,
        counter: async (text) => {
          const res = await this.call('POST', '/tokenize', tokenizeBody(text));
          const count = (res.json as { count?: unknown } | null)?.count;
          return res.status === 200 && typeof count === 'number' ? count : null;
        },
      };
    }
    return {
      viaTokenize: false,
      counter: async (text) => {
        const body = JSON.parse(
          buildRequestBody({
            api,
            model,
            prompt: text,
            outputLen: 1,
            ignoreEos: true,
            temperature: 0,
            stream: false,
            compat,
          }),
        ) as Record<string, unknown>;
        delete body.min_tokens;
        const res = await this.call('POST', apiPath(api), body);
        const n = (res.json as { usage?: { prompt_tokens?: unknown } } | null)?.usage?.prompt_tokens;
        return res.status === 200 && typeof n === 'number' ? n : null;
      },
    };
  }

  /**
   * Sends one tiny request to learn which optional fields the server accepts; a server that rejects
   * vLLM's extras (ignore_eos, min_tokens, continuous usage) is used without them, and the caller says so.
   */
  async probeCompat(api: 'chat' | 'completions', model: string): Promise<{ compat: BodyCompat; note?: string }> {
    const attempts: BodyCompat[] = [
      FULL_COMPAT,
      { fixedLength: true, continuousUsage: false },
      { fixedLength: false, continuousUsage: false },
    ];
    let last: JsonResponse | null = null;
    for (const compat of attempts) {
      const body = JSON.parse(
        buildRequestBody({
          api,
          model,
          prompt: 'Say hi.',
          outputLen: 2,
          ignoreEos: true,
          temperature: 0,
          stream: true,
          compat,
        }),
      ) as unknown;
      last = await this.call('POST', apiPath(api), body);
      if (last.status === 200) {
        if (compat === FULL_COMPAT) return { compat };
        return {
          compat,
          note: compat.fixedLength
            ? 'server rejects stream_options.continuous_usage_stats: per-chunk token counts are estimated'
            : 'server rejects ignore_eos/min_tokens: output length cannot be forced; the output-length check will tell',
        };
      }
      if (last.status !== 400 && last.status !== 422) break;
    }
    const status = last?.status ?? 0;
    const detail = (last?.text ?? '').trim().slice(0, 200);
    if (status === 404) {
      throw new UserError(
        `${this.base}${apiPath(api)} answered 404 for model '${model}': check --model and --api (chat|completions). ${detail}`,
      );
    }
    if (status === 401 || status === 403) {
      throw new UserError(`${this.base} refused the request (HTTP ${status}): pass the server's key with --api-key.`);
    }
    throw new UserError(`${this.base}${apiPath(api)} failed a test request (HTTP ${status}): ${detail}`);
  }
}
