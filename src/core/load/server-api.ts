import { request } from 'undici';
import type { GenerationKind } from '../../shared/endpoint-kinds.js';
import { UserError } from '../errors.js';
import { badAnswerLine, headerText, isRedirect, redirectLine } from '../http-answers.js';
import { bodyDecoderFor } from './body-decoder.js';
import type { DecodeResult } from './body-decoder.js';
import type { MessagesCounter } from './conversations.js';
import type { PromptMessage, TokenCounter } from './prompts.js';
import { FULL_COMPAT, apiPath, buildRequestBody } from './request-body.js';
import type { BodyCompat } from './request-body.js';
import { describeNonStream, looksLikeSse, streamModeOf } from './response-guard.js';
import { isTokenCount, maxPromptTokens } from './usage-bounds.js';

export interface ServerApiOptions {
  baseUrl: string;
  apiKey?: string;
  /** ms before a small control call (tokenize, probe) gives up, body included; --timeout. */
  timeoutMs?: number;
}

interface JsonResponse {
  status: number;
  json: unknown;
  text: string;
  contentType?: string;
}

/** The server's own error text from a JSON error body (OpenAI, vLLM and llama.cpp shapes), else the text. */
function serverMessage(res: JsonResponse): string {
  const parsed = res.json as { error?: { message?: unknown } | string; message?: unknown; detail?: unknown } | null;
  const error = parsed?.error;
  const message =
    (typeof error === 'string' ? error : error?.message) ??
    parsed?.message ??
    (parsed?.detail !== undefined ? JSON.stringify(parsed.detail) : undefined);
  return (typeof message === 'string' ? message : res.text.trim()).slice(0, 300);
}

/** Drops an answer's body unread (undici reports a destroyed body as an abort error: nobody is waiting for it). */
function drop(body: { on(event: 'error', listener: () => void): unknown; destroy(): unknown }): void {
  body.on('error', () => undefined);
  body.destroy();
}

/** Most a control call may answer: a tokenize of a long prompt with pieces is well under this. */
const MAX_CONTROL_BODY = 16 << 20;

/**
 * A token count a server answered for a body it was asked to count, or null when it cannot be one: no safe
 * non-negative integer, or more tokens than the body had bytes (plus a chat template's allowance). A prompt built
 * on such a count would be absurd (a negative count once asked for a billion filler words).
 */
export function boundedCount(value: unknown, body: unknown): number | null {
  if (typeof value !== 'number' || !isTokenCount(value)) return null;
  return value <= maxPromptTokens(Buffer.byteLength(JSON.stringify(body))) ? value : null;
}

/** What a server answered in place of a count, for the message that says why its /tokenize is not used. */
function impossibleCount(value: unknown, body: unknown): string | null {
  if (typeof value !== 'number' || boundedCount(value, body) !== null) return null;
  return `count ${value} for a ${Buffer.byteLength(JSON.stringify(body))}-byte request`;
}

function seconds(ms: number): string {
  return ms >= 10_000 ? `${Math.round(ms / 1000)} s` : `${+(ms / 1000).toFixed(2)} s`;
}

/** Small non-streaming calls to an OpenAI-compatible server: tokenize, probe; each bounded by --timeout. */
/** How a server's prompts are counted: what tokenCounter learnt, carried as one to every level. */
export interface PromptCounting {
  counter: TokenCounter;
  /** The server counts exactly (/tokenize); false: only usage.prompt_tokens after the fact. */
  viaTokenize: boolean;
  /** Counts chat messages: multi-turn histories, system prompts, message lists (absent: the server cannot). */
  countMessages?: MessagesCounter;
  /** Without an exact count: the server's /tokenize counts prompt text, so --api completions would be exact. */
  completionsExact?: boolean;
  /** Without an exact count: what /tokenize answered instead of a count (a web page from a gateway), if it answered. */
  tokenizeAnswer?: string;
  /** Rerank: tokens a query-document pair adds to its document's count (the query, the template), measured once. */
  pairOverhead?: number;
}

export class ServerApi {
  private readonly base: string;
  private readonly headers: Record<string, string>;
  private readonly timeoutMs: number;

  constructor(options: ServerApiOptions) {
    this.base = options.baseUrl.replace(/\/+$/, '');
    this.headers = { 'content-type': 'application/json', 'accept-encoding': 'identity' };
    if (options.apiKey) this.headers.authorization = `Bearer ${options.apiKey}`;
    this.timeoutMs = options.timeoutMs ?? 30_000;
  }

  /**
   * GET or POST JSON. The whole exchange, body included, is bounded by the time-out and the body by 16 MiB;
   * every failure becomes a one-line UserError naming the URL and the fix; `signal` (a cancel) gives up at once.
   */
  async call(method: 'GET' | 'POST', path: string, body?: unknown, signal?: AbortSignal): Promise<JsonResponse> {
    const where = `${method} ${this.base}${path}`;
    const timeout = AbortSignal.timeout(this.timeoutMs);
    const cancelled = (): UserError => new UserError(`${where} was cancelled`);
    if (signal?.aborted) throw cancelled();
    const timedOut = (): UserError =>
      new UserError(
        `${where} gave no complete answer within ${seconds(this.timeoutMs)} (--timeout): the server is hung or busy; check it, or raise --timeout`,
      );
    let res;
    try {
      res = await request(this.base + path, {
        method,
        headers: this.headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        headersTimeout: this.timeoutMs,
        bodyTimeout: this.timeoutMs,
        signal: signal ? AbortSignal.any([timeout, signal]) : timeout,
        // A connection per call: llama.cpp closes its socket after a stream, and a reused one races that close.
        reset: true,
      });
    } catch (error) {
      if (signal?.aborted) throw cancelled();
      if (timeout.aborted) throw timedOut();
      const code = (error as { code?: string }).code ?? (error as Error).name;
      const bad = badAnswerLine(code);
      if (bad) throw new UserError(`${where}: ${bad}`);
      throw new UserError(
        `cannot reach ${this.base} (${code}): is the server running and is --url right (scheme, host, port)?`,
      );
    }
    if (isRedirect(res.statusCode)) {
      drop(res.body);
      throw new UserError(
        `${where}: ${redirectLine(res.statusCode, headerText(res.headers.location), this.base + path, path)}`,
      );
    }
    const coding = bodyDecoderFor(headerText(res.headers['content-encoding']));
    if ('refused' in coding) {
      drop(res.body);
      throw new UserError(`${where}: ${coding.refused}`);
    }
    const decoder = coding.decoder;
    const parts: Buffer[] = [];
    let size = 0;
    // The cap is on the decoded body: a compressed one may not take more memory than a plain one.
    const keep = (result: DecodeResult): void => {
      if ('error' in result) throw new UserError(`${where}: ${result.error}`);
      for (const piece of result.pieces) {
        size += piece.length;
        if (size > MAX_CONTROL_BODY) {
          throw new UserError(
            `${where} answered more than ${MAX_CONTROL_BODY >> 20} MiB: that is not an OpenAI-compatible server; check --url`,
          );
        }
        parts.push(piece);
      }
    };
    try {
      for await (const chunk of res.body as AsyncIterable<Buffer>)
        keep(decoder ? decoder.push(chunk) : { pieces: [chunk] });
      if (decoder) keep(decoder.end());
    } catch (error) {
      // Leaving the loop by a throw destroys the body (the rest is dropped with the connection).
      if (error instanceof UserError) throw error;
      if (signal?.aborted) throw cancelled();
      if (timeout.aborted) throw timedOut();
      const code = (error as { code?: string }).code ?? (error as Error).name;
      throw new UserError(`${where}: the server dropped the connection mid-answer (${code}); check the server's log`);
    }
    const text = Buffer.concat(parts).toString('utf8');
    let json: unknown = null;
    try {
      json = JSON.parse(text);
    } catch {
      json = null;
    }
    const ct = res.headers['content-type'];
    return { status: res.statusCode, json, text, contentType: Array.isArray(ct) ? ct.join(', ') : ct };
  }

  /**
   * A token counter, exact where the server can tokenize: vLLM's and SGLang's POST /tokenize ({count}; both take
   * {prompt} and, SGLang since its chat-template tokenize, {messages} rendered by the chat handler's own template), or
   * llama.cpp's ({content, add_special} -> {tokens}; chat prompts through its /apply-template first, as its chat
   * handler does). Otherwise a one-token request whose usage.prompt_tokens tells the count (`viaTokenize` false: it
   * fills the prefix cache); `completionsExact` then says the server's /tokenize counts prompt text, so `--api
   * completions` would be exact (an SGLang whose /tokenize takes no messages). A server that refuses a calibration
   * request says why, in one line.
   */
  async tokenCounter(
    api: GenerationKind,
    model: string,
    compat: BodyCompat,
    signal?: AbortSignal,
  ): Promise<PromptCounting> {
    let odd: JsonResponse | null = null;
    let impossible: string | null = null;
    const countOf = async (body: Record<string, unknown>, signal?: AbortSignal): Promise<number | null> => {
      const res = await this.call('POST', '/tokenize', body, signal);
      if (res.status === 200 && res.json === null) odd = res;
      const n = (res.json as { count?: unknown } | null)?.count;
      if (res.status !== 200) return null;
      impossible ??= impossibleCount(n, body);
      return boundedCount(n, body);
    };
    // vLLM reads add_generation_prompt; SGLang's chat template adds the generation prompt itself: try both bodies.
    const chatBodies = [true, false].map(
      (gen) =>
        (messages: readonly PromptMessage[]): Record<string, unknown> =>
          gen ? { model, messages, add_generation_prompt: true } : { model, messages },
    );
    const promptBody = (text: string): Record<string, unknown> => ({ model, prompt: text });
    const hello: PromptMessage[] = [{ role: 'user', content: 'hello' }];
    if (api === 'completions') {
      if ((await countOf(promptBody('hello'), signal)) !== null) {
        return { viaTokenize: true, counter: (text, signal) => countOf(promptBody(text), signal) };
      }
    } else {
      for (const chatBody of chatBodies) {
        if ((await countOf(chatBody(hello), signal)) === null) continue;
        const countMessages: MessagesCounter = (messages, signal) => countOf(chatBody(messages), signal);
        return {
          viaTokenize: true,
          counter: (text, signal) => countMessages([{ role: 'user', content: text }], signal),
          countMessages,
        };
      }
    }
    const llama = await this.llamaCppCounter(api, (res) => (odd = res), signal);
    if (llama) return { viaTokenize: true, counter: llama.counter, countMessages: llama.countMessages };
    // Text counts plus a template overhead measured once would miss tokens merged across the template's seams and
    // BOS handling: not exact, so chat on a /tokenize without messages calibrates by usage, and says completions is.
    const completionsExact = api === 'chat' && (await countOf(promptBody('hello'), signal)) !== null;
    // A 200 that is no JSON at all is not "no /tokenize": something (a gateway, a login page) answers in its place.
    const answered = odd as JsonResponse | null;
    const said = impossible as string | null;
    return {
      viaTokenize: false,
      completionsExact,
      ...(answered && {
        tokenizeAnswer: `POST ${this.base}/tokenize answered 200 ${answered.contentType ?? 'without a content type'}, not a token count (${JSON.stringify(answered.text.replace(/\s+/g, ' ').trim().slice(0, 60))})`,
      }),
      ...(said !== null &&
        !answered && { tokenizeAnswer: `POST ${this.base}/tokenize answered ${said}, not a token count` }),
      counter: async (text, signal) => {
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
        const res = await this.call('POST', apiPath(api), body, signal);
        // Messages and Responses name it input_tokens.
        const usage = (res.json as { usage?: { prompt_tokens?: unknown; input_tokens?: unknown } } | null)?.usage;
        const n = usage?.prompt_tokens ?? usage?.input_tokens;
        if (res.status === 200) return boundedCount(n, body);
        if (res.status >= 400 && res.status < 500) {
          throw new UserError(
            `the server refused a prompt-calibration request (HTTP ${res.status}: ${serverMessage(res)}): lower --input-len, or raise the server's context length`,
          );
        }
        return null;
      },
    };
  }

  /** llama.cpp's /tokenize counts the text as its completion handler will (BOS and all); null if absent. */
  private async llamaCppCounter(
    api: GenerationKind,
    onOdd: (res: JsonResponse) => void,
    probeSignal?: AbortSignal,
  ): Promise<{ counter: TokenCounter; countMessages?: MessagesCounter } | null> {
    const tokens = async (content: string, signal?: AbortSignal): Promise<number | null> => {
      const res = await this.call('POST', '/tokenize', { content, add_special: true, parse_special: true }, signal);
      if (res.status === 200 && res.json === null) onOdd(res);
      const list = (res.json as { tokens?: unknown } | null)?.tokens;
      return res.status === 200 && Array.isArray(list) ? boundedCount(list.length, content) : null;
    };
    const probe = await tokens('hello', probeSignal);
    if (probe === null || probe === 0) return null;
    if (api === 'completions') return { counter: (text, signal) => tokens(text, signal) };
    const template = async (messages: readonly PromptMessage[], signal?: AbortSignal): Promise<string | null> => {
      const res = await this.call('POST', '/apply-template', { messages }, signal);
      const prompt = (res.json as { prompt?: unknown } | null)?.prompt;
      return res.status === 200 && typeof prompt === 'string' ? prompt : null;
    };
    // Without the chat template the count would miss its tokens: fall back to counting by usage.
    if ((await template([{ role: 'user', content: 'hello' }], probeSignal)) === null) return null;
    const countMessages: MessagesCounter = async (messages, signal) => {
      const prompt = await template(messages, signal);
      return prompt === null ? null : tokens(prompt, signal);
    };
    return { counter: (text, signal) => countMessages([{ role: 'user', content: text }], signal), countMessages };
  }

  /**
   * Sends one tiny request to learn which optional fields the server accepts; a server that rejects
   * vLLM's extras (ignore_eos, min_tokens, continuous usage) is used without them, and the caller says so.
   */
  async probeCompat(
    api: GenerationKind,
    model: string,
    signal?: AbortSignal,
  ): Promise<{ compat: BodyCompat; note?: string }> {
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
      last = await this.call('POST', apiPath(api), body, signal);
      if (last.status === 200) {
        const mode = streamModeOf(last.contentType);
        if (mode === 'other' || (mode === null && looksLikeSse(last.text.slice(0, 64)) !== true)) {
          throw new UserError(`${this.base}${apiPath(api)}: ${describeNonStream(last.contentType, last.text)}`);
        }
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
      // Quote the server: it may say the key is wrong rather than missing (the CLI blanks a key it echoes).
      const fix = this.headers.authorization
        ? 'check the key given with --api-key (or SERVEBENCH_API_KEY)'
        : "pass the server's key with --api-key (or SERVEBENCH_API_KEY)";
      throw new UserError(
        `${this.base} refused the request (HTTP ${status})${detail ? `: ${serverWords(detail)}` : ''}: ${fix}.`,
      );
    }
    throw new UserError(`${this.base}${apiPath(api)} failed a test request (HTTP ${status}): ${detail}`);
  }
}

/** The message inside an error body (OpenAI's {error: {message}}, FastAPI's {detail}), else the text itself. */
function serverWords(body: string): string {
  try {
    const parsed = JSON.parse(body) as { error?: { message?: unknown } | string; message?: unknown; detail?: unknown };
    const error = parsed.error;
    const text = typeof error === 'string' ? error : (error?.message ?? parsed.message ?? parsed.detail);
    if (typeof text === 'string' && text.trim() !== '') return text.trim().slice(0, 200);
  } catch {
    // Not JSON (a cut body, or plain text): the text is the message.
  }
  return body;
}
