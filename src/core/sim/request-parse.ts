import { HttpError, optInt } from './http.js';
import type { ApiKind } from './responder.js';
import type { Mimic } from './startup-log.js';
import { constraintOf, type SimConstraint } from './structured-answer.js';
import { countChatTokens, countTokens, tokenizeChat, tokenizeCompletion, type ChatMessage } from './tokenizer.js';

/** A generation request as the engine needs it: its API, prompt size (and ids for the prefix cache), limits. */
export interface ParsedRequest {
  api: ApiKind;
  stream: boolean;
  promptTokens: number;
  /** Prompt token ids, only when the prefix cache needs them. */
  ids: number[] | null;
  maxTokens: number;
  minTokens: number;
  ignoreEos: boolean;
  includeUsage: boolean;
  continuousUsage: boolean;
  /** The LoRA adapter the request's model named, when it named one the server serves. */
  adapter?: string;
  /** Structured output or a tool call the body asked for (response_format, structured_outputs, regex, tools). */
  constraint?: SimConstraint;
}

/** What parsing needs to know of the server: its mimic, served model, context and whether ids are kept. */
export interface ParseContext {
  mimic: Mimic;
  model: string;
  maxModelLen: number;
  /** True when the prefix cache is on: prompts are tokenized to ids, not just counted. */
  keepIds: boolean;
  /** LoRA adapters served beside the base model (vLLM --lora-modules): a request's model may name one. */
  adapters?: readonly string[];
}

/** Refuses an unknown model as vLLM and OpenAI do; SGLang serves whatever name is asked for. */
export function checkModel(ctx: ParseContext, body: Record<string, unknown>): void {
  if (ctx.mimic === 'sglang' || body.model === undefined || body.model === ctx.model) return;
  if (typeof body.model === 'string' && ctx.adapters?.includes(body.model)) return;
  throw new HttpError(404, `The model \`${String(body.model)}\` does not exist.`, 'NotFoundError');
}

/** Parses /v1/chat/completions or /v1/completions; a 400 HttpError names what is wrong. */
export function parseOpenAi(
  ctx: ParseContext,
  api: 'chat' | 'completions',
  body: Record<string, unknown>,
): ParsedRequest {
  checkModel(ctx, body);
  let promptTokens: number;
  let ids: number[] | null = null;
  if (api === 'chat') {
    const messages = body.messages;
    if (
      !Array.isArray(messages) ||
      messages.length === 0 ||
      !messages.every((m) => m && typeof m === 'object' && typeof (m as ChatMessage).role === 'string')
    ) {
      throw new HttpError(400, "'messages' must be a non-empty list of {role, content}");
    }
    if (ctx.keepIds) {
      ids = tokenizeChat(messages as ChatMessage[]);
      promptTokens = ids.length;
    } else {
      promptTokens = countChatTokens(messages as ChatMessage[]);
    }
  } else {
    let prompt = body.prompt;
    if (Array.isArray(prompt) && prompt.length === 1 && (typeof prompt[0] === 'string' || Array.isArray(prompt[0])))
      prompt = prompt[0];
    if (typeof prompt === 'string') {
      if (ctx.keepIds) {
        ids = tokenizeCompletion(prompt);
        promptTokens = ids.length;
      } else {
        promptTokens = countTokens(prompt) + 1;
      }
    } else if (Array.isArray(prompt) && prompt.length > 0 && prompt.every((t) => Number.isInteger(t))) {
      ids = prompt as number[];
      promptTokens = ids.length;
    } else {
      throw new HttpError(400, "'prompt' must be a string or a list of token ids (one prompt per request)");
    }
  }
  const maxTokensReq = optInt(body, 'max_completion_tokens', 1) ?? optInt(body, 'max_tokens', 1);
  const constraint = readConstraint(body);
  const parsed = finishParse(ctx, api, body, {
    promptTokens,
    ids,
    maxTokensReq,
    minTokens: optInt(body, 'min_tokens', 0) ?? 0,
    ignoreEos: body.ignore_eos === true,
  });
  return constraint ? { ...parsed, constraint } : parsed;
}

/** The body's constraint; a schema given as a string that is no JSON is the engine's 400. */
function readConstraint(body: Record<string, unknown>): SimConstraint | null {
  try {
    return constraintOf(body);
  } catch (e) {
    throw new HttpError(400, `invalid structured-output constraint: ${(e as Error).message}`);
  }
}

/** Parses SGLang's native /generate (text or input_ids, sampling_params). */
export function parseGenerate(ctx: ParseContext, body: Record<string, unknown>): ParsedRequest {
  let ids: number[] | null = null;
  let promptTokens: number;
  if (typeof body.text === 'string') {
    ids = tokenizeCompletion(body.text);
    promptTokens = ids.length;
  } else if (Array.isArray(body.input_ids) && body.input_ids.every((t) => Number.isInteger(t))) {
    ids = body.input_ids as number[];
    promptTokens = ids.length;
  } else {
    throw new HttpError(400, "/generate needs 'text' (a string) or 'input_ids' (token ids)");
  }
  const sp =
    body.sampling_params && typeof body.sampling_params === 'object'
      ? (body.sampling_params as Record<string, unknown>)
      : {};
  return finishParse(ctx, 'generate', body, {
    promptTokens,
    ids: ctx.keepIds ? ids : null,
    maxTokensReq: optInt(sp, 'max_new_tokens', 1) ?? 128,
    minTokens: optInt(sp, 'min_new_tokens', 0) ?? 0,
    ignoreEos: sp.ignore_eos === true,
  });
}

interface Prompt {
  promptTokens: number;
  ids: number[] | null;
  maxTokensReq: number | undefined;
  minTokens: number;
  ignoreEos: boolean;
}

/** The limits every API shares: the context length (vLLM's words), min_tokens, stream options. */
function finishParse(ctx: ParseContext, api: ApiKind, body: Record<string, unknown>, p: Prompt): ParsedRequest {
  const { promptTokens, maxTokensReq, minTokens } = p;
  const room = ctx.maxModelLen - promptTokens;
  if (room < 1 || (maxTokensReq !== undefined && maxTokensReq > room)) {
    const asked = promptTokens + (maxTokensReq ?? 1);
    throw new HttpError(
      400,
      `This model's maximum context length is ${ctx.maxModelLen} tokens. However, you requested ${asked} tokens (${promptTokens} in the messages, ${maxTokensReq ?? 1} in the completion). Please reduce the length of the messages or completion.`,
    );
  }
  const maxTokens = maxTokensReq ?? room;
  if (minTokens > maxTokens)
    throw new HttpError(400, `min_tokens (${minTokens}) must be less than or equal to max_tokens (${maxTokens})`);
  const so = body.stream_options;
  const streamOptions = so && typeof so === 'object' ? (so as Record<string, unknown>) : {};
  return {
    api,
    stream: body.stream === true,
    promptTokens,
    ids: p.ids,
    maxTokens,
    minTokens,
    ignoreEos: p.ignoreEos,
    includeUsage: streamOptions.include_usage === true,
    continuousUsage: streamOptions.continuous_usage_stats === true,
    ...(typeof body.model === 'string' && ctx.adapters?.includes(body.model) ? { adapter: body.model } : {}),
  };
}
