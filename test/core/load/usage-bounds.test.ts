import { describe, expect, it } from 'vitest';
import { outcomeToRecord } from '../../../src/core/load/outcome-to-record.js';
import { StreamAccumulator } from '../../../src/core/load/stream-accumulator.js';
import { TEMPLATE_TOKEN_ALLOWANCE } from '../../../src/core/load/usage-bounds.js';

const delta = (d: Record<string, unknown>): string => JSON.stringify({ choices: [{ index: 0, delta: d }] });
const usage = (u: Record<string, unknown>): string => JSON.stringify({ choices: [], usage: u });

function record(events: string[], expectedOut: number, bodyBytes?: number) {
  const acc = new StreamAccumulator();
  events.forEach((e, i) => acc.onEvent(e, i + 1));
  acc.onEvent('[DONE]', events.length + 1);
  return outcomeToRecord(
    { id: 1, requestTag: 't', sendMs: 0, endMs: events.length + 1, httpStatus: 200, result: acc.result() },
    { levelIndex: 0, round: 0, expectedIn: 4, expectedOut, ...(bodyBytes !== undefined ? { bodyBytes } : {}) },
  );
}

describe('usage bounds', () => {
  it("allows SGLang's reasoning-to-answer split (one step, two chunks) without per-chunk counts, and no more", () => {
    const chunks = [delta({ reasoning_content: 'a' }), delta({ reasoning_content: 'b' }), delta({ content: 'c' })];
    // 3 chunks, 2 tokens: the step that crossed into the answer came as two chunks.
    expect(record([...chunks, usage({ completion_tokens: 2 })], 8).usageProblems).toBeUndefined();
    expect(record([...chunks, usage({ completion_tokens: 1 })], 8).usageProblems).toEqual([
      { field: 'completion_tokens', code: 'below-chunks', value: 1, bound: 2 },
    ]);
    // Without reasoning there is no such split: 3 chunks are at least 3 tokens.
    const plain = [delta({ content: 'a' }), delta({ content: 'b' }), delta({ content: 'c' })];
    expect(record([...plain, usage({ completion_tokens: 2 })], 8).usageProblems?.[0]?.code).toBe('below-chunks');
  });

  it('bounds prompt_tokens by the request size plus a template allowance, and cached by prompt tokens', () => {
    const events = [delta({ content: 'a' })];
    const ok = record(
      [...events, usage({ completion_tokens: 1, prompt_tokens: 100 + TEMPLATE_TOKEN_ALLOWANCE })],
      1,
      100,
    );
    expect(ok.usageProblems).toBeUndefined();
    expect(ok.nIn).toBe(100 + TEMPLATE_TOKEN_ALLOWANCE);
    const big = record(
      [...events, usage({ completion_tokens: 1, prompt_tokens: 101 + TEMPLATE_TOKEN_ALLOWANCE })],
      1,
      100,
    );
    expect(big.nIn).toBeNull();
    expect(big.usageProblems?.[0]).toMatchObject({ field: 'prompt_tokens', code: 'above-request-size' });
    const cached = record(
      [...events, usage({ completion_tokens: 1, prompt_tokens: 10, prompt_tokens_details: { cached_tokens: 11 } })],
      1,
    );
    expect(cached.cachedPromptTokens).toBeUndefined();
    expect(cached.usageProblems).toEqual([
      { field: 'cached_tokens', code: 'above-prompt-tokens', value: 11, bound: 10 },
    ]);
  });

  it('names reasoning_tokens above completion_tokens and falls back to the chunks for the split', () => {
    const r = record(
      [
        delta({ reasoning_content: 'a' }),
        delta({ content: 'b' }),
        usage({ completion_tokens: 2, reasoning_tokens: 5 }),
      ],
      2,
    );
    expect(r.usageProblems).toEqual([
      { field: 'reasoning_tokens', code: 'above-completion-tokens', value: 5, bound: 2 },
    ]);
    expect(r).toMatchObject({ nOut: 2, nReasoning: 1, nContent: 1, nReasoningSource: 'estimated' });
  });
});
