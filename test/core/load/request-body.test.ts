import { describe, expect, it } from 'vitest';
import { FULL_COMPAT, buildRequestBody } from '../../../src/core/load/request-body.js';

const body = (ignoreEos: boolean, compat = FULL_COMPAT) =>
  JSON.parse(
    buildRequestBody({
      api: 'chat',
      model: 'm',
      prompt: 'p',
      outputLen: 64,
      ignoreEos,
      temperature: 0,
      stream: true,
      compat,
    }),
  ) as Record<string, unknown>;

describe('request body', () => {
  it('fixes the output length: max_tokens = min_tokens = output length, ignore_eos', () => {
    expect(body(true)).toMatchObject({ max_tokens: 64, min_tokens: 64, ignore_eos: true });
  });

  it('lets the model stop early with --allow-eos: no min_tokens, ignore_eos false', () => {
    const b = body(false);
    expect(b.min_tokens).toBeUndefined();
    expect(b.ignore_eos).toBe(false);
    expect(b.max_tokens).toBe(64);
  });

  it('leaves vLLM extras out for a strict OpenAI server', () => {
    const b = body(true, { fixedLength: false, continuousUsage: false });
    expect(b.min_tokens).toBeUndefined();
    expect(b.ignore_eos).toBeUndefined();
    expect(b.stream_options).toEqual({ include_usage: true });
  });
});
