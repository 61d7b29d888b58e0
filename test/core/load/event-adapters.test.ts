import { describe, expect, it } from 'vitest';
import { MessagesAdapter, ResponsesAdapter } from '../../../src/core/load/event-adapters.js';
import { StreamAccumulator } from '../../../src/core/load/stream-accumulator.js';

/** Feeds events through an adapter into an accumulator, one read each (t = 1, 2, ...). */
function run(adapter: MessagesAdapter | ResponsesAdapter, events: unknown[]) {
  const acc = new StreamAccumulator();
  let failed: string | null = null;
  events.forEach((e, i) => {
    const a = adapter.adapt(typeof e === 'string' ? e : JSON.stringify(e));
    if ('fail' in a) failed ??= a.fail;
    else for (const d of a.data) acc.onEvent(d, i + 1);
  });
  return { result: acc.result(), failed };
}

// The event sequence of vLLM's anthropic/serving.py message_stream_converter.
const MESSAGES = [
  {
    type: 'message_start',
    message: {
      id: 'm',
      type: 'message',
      role: 'assistant',
      content: [],
      usage: { input_tokens: 12, output_tokens: 0 },
    },
  },
  { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '' } },
  { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'hm' } },
  { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'abc' } },
  { type: 'content_block_stop', index: 0 },
  { type: 'ping' },
  { type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: 'Hi' } },
  { type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: ' there' } },
  { type: 'message_delta', delta: { stop_reason: 'max_tokens' }, usage: { output_tokens: 3 } },
  { type: 'message_stop' },
];

describe('MessagesAdapter', () => {
  it('times the first thinking delta as the first token and the first text delta as the first answer token', () => {
    const { result, failed } = run(new MessagesAdapter(), MESSAGES);
    expect(failed).toBeNull();
    expect(result.firstTokenMs).toBe(3);
    expect(result.firstContentMs).toBe(7);
    expect(result.chunks.map(([t]) => t)).toEqual([3, 7, 8]);
    // input_tokens from message_start, output_tokens from message_delta.
    expect([result.promptTokens, result.completionTokens, result.error]).toEqual([12, 3, null]);
  });

  it('fails a stream of chat chunks sent to /v1/messages in one line', () => {
    const { failed } = run(new MessagesAdapter(), [{ choices: [{ index: 0, delta: { content: 'x' } }] }]);
    expect(failed).toMatch(/chat-completions chunks, not Anthropic's Messages events/);
    expect(failed).not.toContain('\n');
  });

  it('quotes an error event', () => {
    const { failed } = run(new MessagesAdapter(), [
      { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
    ]);
    expect(failed).toBe('the server sent an error event: Overloaded');
  });

  it('counts a malformed event line as the accumulator does, without failing the stream', () => {
    const { result, failed } = run(new MessagesAdapter(), [
      MESSAGES[0],
      '{"type": "content_block_delta", ',
      ...MESSAGES.slice(6),
    ]);
    expect(failed).toBeNull();
    expect(result.malformedLines).toBe(1);
    expect(result.completionTokens).toBe(3);
  });
});

describe('ResponsesAdapter', () => {
  const completed = {
    type: 'response.completed',
    sequence_number: 5,
    response: {
      id: 'r',
      status: 'completed',
      usage: { input_tokens: 9, output_tokens: 4, total_tokens: 13, output_tokens_details: { reasoning_tokens: 1 } },
    },
  };
  it('reads output and reasoning deltas and the usage of response.completed', () => {
    const { result, failed } = run(new ResponsesAdapter(), [
      { type: 'response.created', sequence_number: 0, response: { id: 'r', status: 'in_progress' } },
      { type: 'response.reasoning_text.delta', sequence_number: 1, delta: 'so' },
      { type: 'response.output_text.delta', sequence_number: 2, delta: 'A' },
      { type: 'response.output_text.delta', sequence_number: 3, delta: 'B' },
      { type: 'response.output_text.done', sequence_number: 4, text: 'AB' },
      completed,
    ]);
    expect(failed).toBeNull();
    expect([result.firstTokenMs, result.firstContentMs]).toEqual([2, 3]);
    expect([result.promptTokens, result.completionTokens, result.reasoningTokens, result.sawDone]).toEqual([
      9,
      4,
      1,
      true,
    ]);
  });

  it('fails Messages events sent to /v1/responses in one line', () => {
    const { failed } = run(new ResponsesAdapter(), [MESSAGES[0]]);
    expect(failed).toMatch(/'message_start' events, not OpenAI's Responses events/);
  });

  it('a stream that stops before response.completed is truncated, not complete', () => {
    const { result } = run(new ResponsesAdapter(), [{ type: 'response.output_text.delta', delta: 'A' }]);
    expect(result.errorKind).toBe('truncated');
  });
});
