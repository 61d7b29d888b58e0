import type { ServerResponse } from 'node:http';
import type { EventDialect } from '../../shared/endpoint-kinds.js';
import { HttpError } from './http.js';

type Json = Record<string, unknown>;

/**
 * A Messages or Responses request as the chat request it becomes, as vLLM serves both (anthropic/serving.py converts
 * to a ChatCompletionRequest; the Responses server renders `input` as chat messages): usage asked for in the stream.
 */
export function chatBodyOf(dialect: EventDialect, body: Json): Json {
  const chat: Json = { ...body, stream_options: { include_usage: true } };
  if (dialect === 'messages') {
    if (!Array.isArray(body.messages)) throw new HttpError(400, "'messages' must be a list");
    if (typeof body.max_tokens !== 'number') throw new HttpError(400, "'max_tokens' is required");
    const system = typeof body.system === 'string' ? [{ role: 'system', content: body.system }] : [];
    chat.messages = [...system, ...(body.messages as unknown[])];
    delete chat.system;
  } else {
    const input = body.input;
    if (typeof input === 'string') chat.messages = [{ role: 'user', content: input }];
    else if (Array.isArray(input)) chat.messages = input;
    else throw new HttpError(400, "'input' must be a string or a list of messages");
    delete chat.input;
    if (typeof body.max_output_tokens === 'number') chat.max_tokens = body.max_output_tokens;
    delete chat.max_output_tokens;
  }
  return chat;
}

const sse = (event: string, data: Json): string => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

/** Turns the simulator's chat chunks into one dialect's events, chunk by chunk (written from vLLM's converters). */
class DialectStream {
  private started = false;
  private blockOpen = false;
  private finish: unknown = null;
  private seq = 0;

  constructor(
    private readonly dialect: EventDialect,
    private readonly id: string,
    private readonly model: string,
    private readonly promptTokens: number,
  ) {}

  translate(text: string): string {
    let out = '';
    for (const event of text.split('\n\n')) {
      const line = event.split('\n').find((l) => l.startsWith('data: '));
      if (line) out += this.one(line.slice(6));
    }
    return out;
  }

  private one(data: string): string {
    let out = this.start();
    if (data === '[DONE]')
      return out + (this.dialect === 'messages' ? sse('message_stop', { type: 'message_stop' }) : '');
    const c = JSON.parse(data) as { choices?: Json[]; usage?: Json | null };
    const choice = c.choices?.[0] as { delta?: Json; text?: unknown; finish_reason?: unknown } | undefined;
    if (choice?.finish_reason) this.finish = choice.finish_reason;
    const delta = choice?.delta ?? {};
    const thinking = delta.reasoning_content ?? delta.reasoning;
    if (typeof thinking === 'string' && thinking !== '') out += this.delta(thinking, true);
    if (typeof delta.content === 'string' && delta.content !== '') out += this.delta(delta.content, false);
    if (c.usage && (!c.choices || c.choices.length === 0)) out += this.usage(c.usage);
    return out;
  }

  private start(): string {
    if (this.started) return '';
    this.started = true;
    if (this.dialect === 'messages') {
      const message = {
        id: this.id,
        type: 'message',
        role: 'assistant',
        content: [],
        model: this.model,
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: this.promptTokens, output_tokens: 0 },
      };
      return sse('message_start', { type: 'message_start', message });
    }
    return sse('response.created', {
      type: 'response.created',
      sequence_number: this.seq++,
      response: { id: this.id, object: 'response', status: 'in_progress', model: this.model },
    });
  }

  private delta(text: string, thinking: boolean): string {
    if (this.dialect === 'responses') {
      const type = thinking ? 'response.reasoning_text.delta' : 'response.output_text.delta';
      return sse(type, {
        type,
        sequence_number: this.seq++,
        item_id: `msg_${this.id}`,
        output_index: 0,
        content_index: 0,
        delta: text,
      });
    }
    let out = '';
    if (!this.blockOpen) {
      this.blockOpen = true;
      out += sse('content_block_start', {
        type: 'content_block_start',
        index: 0,
        content_block: { type: 'text', text: '' },
      });
    }
    const delta = thinking ? { type: 'thinking_delta', thinking: text } : { type: 'text_delta', text };
    return out + sse('content_block_delta', { type: 'content_block_delta', index: 0, delta });
  }

  private usage(usage: Json): string {
    const input = usage.prompt_tokens;
    const output = usage.completion_tokens;
    if (this.dialect === 'messages') {
      const stop = this.finish === 'length' ? 'max_tokens' : 'end_turn';
      const close = this.blockOpen ? sse('content_block_stop', { type: 'content_block_stop', index: 0 }) : '';
      return (
        close +
        sse('message_delta', {
          type: 'message_delta',
          delta: { stop_reason: stop },
          usage: { input_tokens: input, output_tokens: output },
        })
      );
    }
    const details = usage.completion_tokens_details as { reasoning_tokens?: unknown } | undefined;
    const status = this.finish === 'length' ? 'incomplete' : 'completed';
    const type = status === 'completed' ? 'response.completed' : 'response.incomplete';
    const response = {
      id: this.id,
      object: 'response',
      status,
      model: this.model,
      usage: {
        input_tokens: input,
        output_tokens: output,
        total_tokens: Number(input) + Number(output),
        output_tokens_details: { reasoning_tokens: details?.reasoning_tokens ?? 0 },
      },
    };
    return sse(type, { type, sequence_number: this.seq++, response });
  }
}

/** Makes `res` speak a dialect: every chat chunk the responder writes leaves as that API's events. */
export function speakDialect(
  res: ServerResponse,
  dialect: EventDialect,
  id: string,
  model: string,
  promptTokens: number,
): void {
  const stream = new DialectStream(dialect, id, model, promptTokens);
  const write = res.write.bind(res) as (chunk: unknown, encoding?: BufferEncoding) => boolean;
  const end = res.end.bind(res) as (chunk?: unknown, encoding?: BufferEncoding) => ServerResponse;
  // The responder writes ASCII or UTF-8 text (or its bytes): either reads back as UTF-8.
  const text = (chunk: unknown): string => (Buffer.isBuffer(chunk) ? chunk.toString('utf8') : String(chunk ?? ''));
  const streaming = (): boolean => String(res.getHeader('content-type') ?? '').startsWith('text/event-stream');
  res.write = ((chunk: unknown) =>
    write(streaming() ? stream.translate(text(chunk)) : chunk, 'utf8')) as ServerResponse['write'];
  res.end = ((chunk?: unknown) =>
    chunk === undefined || typeof chunk === 'function' || !streaming()
      ? end(chunk as never)
      : end(stream.translate(text(chunk)), 'utf8')) as ServerResponse['end'];
}
