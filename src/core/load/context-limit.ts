import { request } from 'undici';
import { headerText } from '../http-answers.js';
import { bodyDecoderFor } from './body-decoder.js';
import type { EngineKind } from '../../shared/config.js';
import type { ContextLimit } from './plan-limits.js';

/** Options of readContextLimit. */
export interface ContextLimitOptions {
  baseUrl: string;
  model: string;
  apiKey?: string;
  /** ms per look-up; a server that does not answer quickly just has no known limit. */
  timeoutMs?: number;
  /** Cancels the look-ups (Ctrl-C). */
  signal?: AbortSignal;
}

// A model list or /props is a few KB; anything far larger is not one, and is not read whole.
const MAX_BODY = 1024 * 1024;
// More slots than any server runs is no slot count (llama.cpp allocates a context per slot).
const MAX_SLOTS = 65_536;

async function getJson(url: string, options: ContextLimitOptions): Promise<unknown> {
  const timeoutMs = options.timeoutMs ?? 5_000;
  try {
    const res = await request(url, {
      headers: {
        'accept-encoding': 'identity',
        ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}),
      },
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      signal: options.signal
        ? AbortSignal.any([options.signal, AbortSignal.timeout(timeoutMs)])
        : AbortSignal.timeout(timeoutMs),
    });
    if (res.statusCode !== 200) {
      await res.body.dump().catch(() => undefined);
      return undefined;
    }
    // A compressed answer is decoded (an unknown encoding is no answer); the cap holds for the decoded text.
    const coding = bodyDecoderFor(headerText(res.headers['content-encoding']));
    if ('refused' in coding) {
      res.body.destroy();
      return undefined;
    }
    let text = '';
    const add = (pieces: Buffer[]): boolean => {
      for (const piece of pieces) text += String(piece);
      return text.length <= MAX_BODY;
    };
    for await (const chunk of res.body as AsyncIterable<Buffer>) {
      const result = coding.decoder ? coding.decoder.push(chunk) : { pieces: [chunk] };
      if ('error' in result || !add(result.pieces)) {
        res.body.destroy();
        return undefined;
      }
    }
    const rest = coding.decoder?.end();
    if (rest && ('error' in rest || !add(rest.pieces))) return undefined;
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

const positiveInt = (v: unknown): number | undefined =>
  typeof v === 'number' && Number.isSafeInteger(v) && v > 0 ? v : undefined;

/** The engine of a limit from /v1/models: vLLM and SGLang name themselves in `owned_by`. */
function engineOfOwner(owner: unknown): EngineKind | undefined {
  return owner === 'vllm' || owner === 'sglang' ? owner : undefined;
}

/**
 * The longest request (prompt plus output tokens) the server accepts, where it says so: vLLM and SGLang list
 * `max_model_len` per model in /v1/models; llama.cpp gives the per-slot context `n_ctx` in /props
 * (`default_generation_settings.n_ctx`) and its slot count (`total_slots`). `engine`: which engine answered, where
 * it says so. Undefined when the server says nothing.
 */
export async function readContextLimit(options: ContextLimitOptions): Promise<ContextLimit | undefined> {
  const base = options.baseUrl.replace(/\/+$/, '');
  const models = (await getJson(`${base}/v1/models`, options)) as { data?: unknown } | undefined;
  const list = Array.isArray(models?.data) ? (models.data as Array<Record<string, unknown>>) : [];
  const entry = list.find((m) => m?.id === options.model) ?? (list.length === 1 ? list[0] : undefined);
  const fromModels = positiveInt(entry?.max_model_len);
  if (fromModels !== undefined) {
    const engine = engineOfOwner(entry?.owned_by);
    return { tokens: fromModels, source: 'max_model_len in /v1/models', ...(engine ? { engine } : {}) };
  }
  const props = (await getJson(`${base}/props`, options)) as Record<string, unknown> | undefined;
  const settings = props?.default_generation_settings as Record<string, unknown> | undefined;
  const nCtx = positiveInt(settings?.n_ctx) ?? positiveInt(props?.n_ctx);
  if (nCtx === undefined) return undefined;
  // Only llama.cpp's server answers /props with a per-slot n_ctx.
  const slots = positiveInt(props?.total_slots);
  return {
    tokens: nCtx,
    source: 'n_ctx per slot in /props',
    engine: 'llamacpp',
    ...(slots !== undefined && slots <= MAX_SLOTS ? { slots } : {}),
  };
}
