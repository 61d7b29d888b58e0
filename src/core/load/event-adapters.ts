import type { EventDialect } from '../../shared/endpoint-kinds.js';

/** What one event of another API amounts to: chat-chunk data for the accumulator, nothing, or the request's failure. */
export type Adapted = { data: string[] } | { fail: string; kind: 'wrong-events' | 'server-error' };

const NOTHING: Adapted = { data: [] };
const chunk = (choice: Record<string, unknown>): string => JSON.stringify({ choices: [{ index: 0, ...choice }] });
const usageChunk = (usage: Record<string, unknown>): string => JSON.stringify({ choices: [], usage });

interface Counts {
  input_tokens?: unknown;
  output_tokens?: unknown;
  output_tokens_details?: { reasoning_tokens?: unknown } | null;
}

function parsed(data: string): Record<string, unknown> | null {
  try {
    const v: unknown = JSON.parse(data);
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** The one line for a stream of another API's events (a server that answers chat chunks to /v1/messages). */
function wrongEvents(dialect: EventDialect, event: Record<string, unknown>): Adapted {
  const what =
    'choices' in event
      ? 'chat-completions chunks'
      : typeof event.type === 'string'
        ? `'${event.type.slice(0, 40)}' events`
        : 'events without a type';
  const api = dialect === 'messages' ? "Anthropic's Messages" : "OpenAI's Responses";
  return {
    fail: `the server answered /v1/${dialect} with ${what}, not ${api} events: it does not serve that API; pick --api chat`,
    kind: 'wrong-events',
  };
}

function errorMessage(event: Record<string, unknown>): string {
  const e = event.error as { message?: unknown } | undefined;
  const m =
    typeof e?.message === 'string' ? e.message : typeof event.message === 'string' ? event.message : 'no message';
  return `the server sent an error event: ${m.slice(0, 300)}`;
}

/**
 * Anthropic Messages events as vLLM's anthropic/serving.py and llama.cpp's tools/server write them: message_start
 * (usage.input_tokens), content_block_delta with a text_delta or thinking_delta, message_delta (delta.stop_reason,
 * usage.output_tokens; vLLM also input_tokens), message_stop; ping, block start/stop and signature deltas carry nothing.
 */
export class MessagesAdapter {
  private inputTokens: unknown = undefined;

  adapt(data: string): Adapted {
    const event = parsed(data);
    if (event === null) return { data: [data] };
    switch (event.type) {
      case 'message_start': {
        const usage = (event.message as { usage?: Counts } | undefined)?.usage;
        this.inputTokens = usage?.input_tokens;
        return NOTHING;
      }
      case 'content_block_delta': {
        const delta = event.delta as { type?: unknown; text?: unknown; thinking?: unknown } | undefined;
        if (delta?.type === 'text_delta') return { data: [chunk({ delta: { content: delta.text } })] };
        if (delta?.type === 'thinking_delta')
          return { data: [chunk({ delta: { reasoning_content: delta.thinking } })] };
        return NOTHING;
      }
      case 'message_delta': {
        const usage = (event.usage ?? {}) as Counts;
        const stop = (event.delta as { stop_reason?: unknown } | undefined)?.stop_reason;
        const usageOut: Record<string, unknown> = { prompt_tokens: usage.input_tokens ?? this.inputTokens };
        if (usage.output_tokens !== undefined) usageOut.completion_tokens = usage.output_tokens;
        return { data: [chunk({ delta: {}, finish_reason: stop ?? 'end_turn' }), usageChunk(usageOut)] };
      }
      case 'message_stop':
        return { data: ['[DONE]'] };
      case 'ping':
      case 'content_block_start':
      case 'content_block_stop':
        return NOTHING;
      case 'error':
        return { fail: errorMessage(event), kind: 'server-error' };
      default:
        return wrongEvents('messages', event);
    }
  }
}

/**
 * OpenAI Responses events as vLLM's protocol streams them: response.output_text.delta and response.reasoning_text.delta
 * (`delta`), usage (input_tokens, output_tokens, output_tokens_details.reasoning_tokens) in response.completed or
 * response.incomplete, which end the stream; the other response.* events carry no tokens.
 */
export class ResponsesAdapter {
  adapt(data: string): Adapted {
    const event = parsed(data);
    if (event === null) return { data: [data] };
    const type = typeof event.type === 'string' ? event.type : '';
    if (type === 'response.output_text.delta') return { data: [chunk({ delta: { content: event.delta } })] };
    if (type === 'response.reasoning_text.delta' || type === 'response.reasoning_summary_text.delta')
      return { data: [chunk({ delta: { reasoning_content: event.delta } })] };
    if (type === 'response.completed' || type === 'response.incomplete') return this.end(event, type);
    if (type === 'error' || type === 'response.failed') return { fail: errorMessage(event), kind: 'server-error' };
    if (type.startsWith('response.')) return NOTHING;
    return wrongEvents('responses', event);
  }

  private end(event: Record<string, unknown>, type: string): Adapted {
    const usage = ((event.response as { usage?: Counts } | undefined)?.usage ?? {}) as Counts;
    const out: Record<string, unknown> = { prompt_tokens: usage.input_tokens, completion_tokens: usage.output_tokens };
    const reasoning = usage.output_tokens_details?.reasoning_tokens;
    if (reasoning !== undefined) out.completion_tokens_details = { reasoning_tokens: reasoning };
    const finish = type === 'response.completed' ? 'stop' : 'length';
    return { data: [chunk({ delta: {}, finish_reason: finish }), usageChunk(out), '[DONE]'] };
  }
}

/** The adapter of a dialect: each request gets its own (a Messages stream keeps its input count between events). */
export function eventAdapter(dialect: EventDialect): MessagesAdapter | ResponsesAdapter {
  return dialect === 'messages' ? new MessagesAdapter() : new ResponsesAdapter();
}
