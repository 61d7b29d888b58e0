import { describe, expect, it } from 'vitest';
import { MAX_KEPT_TEXT_CHARS, StreamAccumulator } from '../../../src/core/load/stream-accumulator.js';

const chat = (content: string | null, extra: Record<string, unknown> = {}): string =>
  JSON.stringify({
    choices: [{ index: 0, delta: content === null ? { role: 'assistant' } : { content }, finish_reason: null }],
    ...extra,
  });

describe('StreamAccumulator', () => {
  it('reads cached prompt tokens from usage.prompt_tokens_details or llama.cpp timings.cache_n, and nothing else', () => {
    const run = (...events: Record<string, unknown>[]): number | null => {
      const acc = new StreamAccumulator();
      acc.onEvent(chat('a'), 1);
      for (const e of events) acc.onEvent(JSON.stringify({ choices: [], ...e }), 2);
      acc.onEvent('[DONE]', 3);
      return acc.result().cachedPromptTokens;
    };
    expect(
      run({ usage: { prompt_tokens: 900, completion_tokens: 1, prompt_tokens_details: { cached_tokens: 512 } } }),
    ).toBe(512);
    expect(run({ timings: { cache_n: 37, prompt_n: 863, prompt_ms: 20, predicted_ms: 5 } })).toBe(37);
    // SGLang without --enable-cache-report, vLLM without --enable-prompt-tokens-details: said nothing.
    expect(run({ usage: { prompt_tokens: 9, completion_tokens: 1, prompt_tokens_details: null } })).toBeNull();
    expect(run({ usage: { prompt_tokens: 9, completion_tokens: 1 } })).toBeNull();
    // A broken or hostile server's values are no counts.
    for (const bad of [-1, 1.5, '12', true, null, Number.NaN])
      expect(run({ timings: { cache_n: bad }, usage: { prompt_tokens_details: { cached_tokens: bad } } })).toBeNull();
  });

  it('does not count the role-only first chunk as the first token', () => {
    const acc = new StreamAccumulator();
    acc.onEvent(chat(null), 10);
    acc.onEvent(chat(''), 11);
    acc.onEvent(chat('Hi'), 15);
    acc.onEvent('[DONE]', 16);
    const r = acc.result();
    expect(r.firstTokenMs).toBe(15);
    expect(r.chunks).toEqual([[15, 1]]);
    expect(r.error).toBeNull();
  });

  it('takes per-chunk token counts from continuous usage and n_out from the final usage', () => {
    const acc = new StreamAccumulator();
    const u = (c: number): Record<string, unknown> => ({
      usage: { prompt_tokens: 100, completion_tokens: c, total_tokens: 100 + c },
    });
    acc.onEvent(chat(null, u(0)), 1);
    acc.onEvent(chat('a b', u(2)), 2);
    acc.onEvent(chat('c', u(3)), 3);
    acc.onEvent(JSON.stringify({ choices: [], usage: { prompt_tokens: 100, completion_tokens: 3 } }), 4);
    acc.onEvent('[DONE]', 4);
    const r = acc.result();
    expect(r.chunks).toEqual([
      [2, 2],
      [3, 1],
    ]);
    expect(r.chunkTokensFromServer).toBe(true);
    expect(r.completionTokens).toBe(3);
    expect(r.promptTokens).toBe(100);
  });

  it('adds no token for text whose server count did not grow (SGLang splits a reasoning-to-answer step)', () => {
    const acc = new StreamAccumulator();
    const step = (delta: Record<string, unknown>, c: number): string =>
      JSON.stringify({
        choices: [{ index: 0, delta, finish_reason: null }],
        usage: { prompt_tokens: 10, completion_tokens: c, total_tokens: 10 + c },
      });
    acc.onEvent(step({ reasoning_content: 'think think think think' }, 4), 1);
    // One step of 3 tokens: the end of the reasoning, then the start of the answer, both carrying the total 7.
    acc.onEvent(step({ reasoning_content: 'done' }, 7), 2);
    acc.onEvent(step({ content: 'The' }, 7), 2.1);
    acc.onEvent(step({ content: ' answer' }, 10), 3);
    acc.onEvent(
      JSON.stringify({ choices: [], usage: { prompt_tokens: 10, completion_tokens: 10, reasoning_tokens: 6 } }),
      4,
    );
    acc.onEvent('[DONE]', 4);
    const r = acc.result();
    expect(r.chunks).toEqual([
      [1, 4],
      [2, 3],
      [3, 3],
    ]);
    expect(r.chunks.reduce((s, [, n]) => s + n, 0)).toBe(r.completionTokens);
    expect(r.chunkTokensFromServer).toBe(true);
    expect(r.firstContentMs).toBe(2.1);
  });

  it('reads usage put on the last choice chunk and estimates chunk tokens otherwise', () => {
    const acc = new StreamAccumulator();
    acc.onEvent(chat('a'), 1);
    acc.onEvent(
      JSON.stringify({
        choices: [{ delta: { content: 'b' }, finish_reason: 'length' }],
        usage: { prompt_tokens: 5, completion_tokens: 2 },
      }),
      2,
    );
    const r = acc.result();
    expect(r.completionTokens).toBe(2);
    expect(r.finishReason).toBe('length');
    expect(r.chunkTokensFromServer).toBe(false);
    expect(r.error).toBeNull();
  });

  it('counts completions text and reasoning deltas as tokens', () => {
    const acc = new StreamAccumulator();
    acc.onEvent(JSON.stringify({ choices: [{ text: 'x' }] }), 1);
    acc.onEvent(JSON.stringify({ choices: [{ delta: { reasoning_content: 'think' } }] }), 2);
    acc.onEvent(JSON.stringify({ choices: [{ delta: { reasoning: 'more' } }] }), 3);
    acc.onEvent('[DONE]', 3);
    expect(acc.result().clientChunkCount).toBe(3);
  });

  it('records an error object mid-stream and counts non-JSON data without crashing', () => {
    const acc = new StreamAccumulator();
    acc.onEvent(chat('a'), 1);
    acc.onEvent('{not json', 2);
    acc.onEvent(JSON.stringify({ error: { message: 'boom', code: 500 } }), 3);
    acc.onEvent('[DONE]', 4);
    const r = acc.result();
    expect(r.malformedLines).toBe(1);
    expect(r.error).toBe('boom');
    expect(r.errorKind).toBe('midstream-error');
  });

  it('calls a stream that ends without [DONE] or finish_reason truncated', () => {
    const acc = new StreamAccumulator();
    acc.onEvent(chat('a'), 1);
    expect(acc.result().errorKind).toBe('truncated');
  });
});

describe('StreamAccumulator keepText', () => {
  it('keeps the answer text (not reasoning) only when asked, and keeps none otherwise', () => {
    const events = [
      JSON.stringify({ choices: [{ delta: { reasoning_content: 'thinking' } }] }),
      chat('Hello'),
      chat(' world'),
      JSON.stringify({ choices: [{ delta: {}, finish_reason: 'length' }] }),
    ];
    const kept = new StreamAccumulator({ keepText: true });
    const plain = new StreamAccumulator();
    events.forEach((e, i) => {
      kept.onEvent(e, i);
      plain.onEvent(e, i);
    });
    expect(kept.result().text).toBe('Hello world');
    expect(plain.result()).not.toHaveProperty('text');
  });

  it('keeps completions text and bounds what it keeps', () => {
    const acc = new StreamAccumulator({ keepText: true });
    const big = 'x'.repeat(MAX_KEPT_TEXT_CHARS - 2);
    acc.onEvent(JSON.stringify({ choices: [{ text: big }] }), 1);
    acc.onEvent(JSON.stringify({ choices: [{ text: 'abcdef', finish_reason: 'length' }] }), 2);
    const text = acc.result().text ?? '';
    expect(text.length).toBe(MAX_KEPT_TEXT_CHARS);
    expect(text.endsWith('xab')).toBe(true);
  });
});
