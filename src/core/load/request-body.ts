import { ENDPOINTS, eventDialect, isPooling, type EndpointKind } from '../../shared/endpoint-kinds.js';
import { buildDialectBody } from './dialect-body.js';
import { buildPoolingBody } from './pooling-body.js';
import { structuredFields } from './structured-body.js';
import type { StructuredSpec } from '../workloads/structured-spec.js';

/** Which optional sampling fields the server accepts (strict OpenAI clones reject vLLM's extras). */
export interface BodyCompat {
  /** ignore_eos and min_tokens (vLLM, SGLang). */
  fixedLength: boolean;
  /** stream_options.continuous_usage_stats (vLLM). */
  continuousUsage: boolean;
}

export const FULL_COMPAT: BodyCompat = { fixedLength: true, continuousUsage: true };

export interface BodyOptions {
  api: EndpointKind;
  /** Pooling endpoints (embeddings, rerank): the request's inputs; `prompt` is then unused. */
  inputs?: readonly string[];
  model: string;
  prompt: string;
  /** Chat API only: sent as they are instead of one user message holding `prompt`. */
  messages?: ReadonlyArray<{ role: string; content: string }>;
  outputLen: number;
  ignoreEos: boolean;
  temperature: number;
  stream: boolean;
  compat: BodyCompat;
  /** llama.cpp's per-request adapters: `lora: [{id, scale}]` by their place in its --lora list. */
  lora?: ReadonlyArray<{ id: number; scale: number }>;
  /** --response-format or --tools (chat, completions): the constraint's fields, and the model may stop. */
  structured?: StructuredSpec;
}

/** The request path for an endpoint kind. */
export function apiPath(api: EndpointKind): string {
  return ENDPOINTS[api].path;
}

/** Serialises one request: fixed output length (max_tokens = min_tokens, ignore_eos) and usage in the stream. */
export function buildRequestBody(o: BodyOptions): string {
  if (isPooling(o.api)) return buildPoolingBody(o.api, o.model, o.inputs ?? [o.prompt]);
  const dialect = eventDialect(o.api);
  if (dialect) return JSON.stringify(buildDialectBody(dialect, { ...o, fixedLength: o.compat.fixedLength }));
  const body: Record<string, unknown> = { model: o.model };
  if (o.api === 'chat') body.messages = o.messages ?? [{ role: 'user', content: o.prompt }];
  else body.prompt = o.prompt;
  body.max_tokens = o.outputLen;
  // A constrained answer ends where its grammar does: forcing more tokens would break it.
  if (o.compat.fixedLength && !o.structured) {
    // min_tokens would forbid the early stop that --allow-eos asks for.
    if (o.ignoreEos) body.min_tokens = o.outputLen;
    body.ignore_eos = o.ignoreEos;
  }
  body.temperature = o.temperature;
  if (o.lora) body.lora = o.lora;
  if (o.structured) Object.assign(body, structuredFields(o.structured));
  body.stream = o.stream;
  if (o.stream) {
    body.stream_options = o.compat.continuousUsage
      ? { include_usage: true, continuous_usage_stats: true }
      : { include_usage: true };
  }
  return JSON.stringify(body);
}
