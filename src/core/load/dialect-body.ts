import type { EventDialect } from '../../shared/endpoint-kinds.js';

/** What a Messages or Responses request carries (the fixed-length fields as chat's: vLLM takes them on both). */
export interface DialectBodyOptions {
  model: string;
  prompt: string;
  messages?: ReadonlyArray<{ role: string; content: string }>;
  outputLen: number;
  temperature: number;
  stream: boolean;
  /** ignore_eos and min_tokens, where the server takes them (probed as for chat). */
  fixedLength: boolean;
  ignoreEos: boolean;
}

/**
 * A Messages body (`{model, max_tokens, messages, system?, stream}`: Anthropic's shape, which vLLM's anthropic
 * protocol and llama.cpp's convert_anthropic_to_oai read; system messages go to the top-level `system`) or a
 * Responses body (`{model, input, max_output_tokens, stream}`, vLLM's ResponsesRequest).
 */
export function buildDialectBody(dialect: EventDialect, o: DialectBodyOptions): Record<string, unknown> {
  const messages = o.messages ?? [{ role: 'user', content: o.prompt }];
  const body: Record<string, unknown> = { model: o.model };
  if (dialect === 'messages') {
    const system = messages.filter((m) => m.role === 'system').map((m) => m.content);
    if (system.length > 0) body.system = system.join('\n');
    body.messages = messages.filter((m) => m.role !== 'system');
    body.max_tokens = o.outputLen;
  } else {
    body.input = o.messages ? messages : o.prompt;
    body.max_output_tokens = o.outputLen;
  }
  if (o.fixedLength) {
    if (o.ignoreEos) body.min_tokens = o.outputLen;
    body.ignore_eos = o.ignoreEos;
  }
  body.temperature = o.temperature;
  body.stream = o.stream;
  return body;
}
