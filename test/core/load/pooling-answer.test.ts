import { describe, expect, it } from 'vitest';
import { readPoolingAnswer } from '../../../src/core/load/pooling-answer.js';
import { buildRequestBody } from '../../../src/core/load/request-body.js';
import { FULL_COMPAT } from '../../../src/core/load/request-body.js';
import { groupPoolingPrompts, inputPositions } from '../../../src/core/workloads/pooling-prompts.js';

const body = (api: 'embeddings' | 'rerank' | 'score', inputs: string[]) =>
  JSON.parse(
    buildRequestBody({
      api,
      model: 'm',
      prompt: '',
      inputs,
      outputLen: 1,
      ignoreEos: true,
      temperature: 0,
      stream: false,
      compat: FULL_COMPAT,
    }),
  ) as Record<string, unknown>;

describe('pooling request bodies', () => {
  it('embeddings send the batch as input, rerank as documents with every score asked for', () => {
    expect(body('embeddings', ['a', 'b'])).toEqual({ model: 'm', input: ['a', 'b'], encoding_format: 'float' });
    const rerank = body('rerank', ['a', 'b', 'c']);
    expect(rerank.documents).toEqual(['a', 'b', 'c']);
    expect(rerank.top_n).toBe(3);
    expect(typeof rerank.query).toBe('string');
  });

  it("score sends vLLM's text_1 (the query) and text_2 (the documents), which every version takes", () => {
    const score = body('score', ['a', 'b']);
    expect(Object.keys(score).sort()).toEqual(['model', 'text_1', 'text_2']);
    expect(score.text_2).toEqual(['a', 'b']);
    expect(typeof score.text_1).toBe('string');
  });
});

describe('readPoolingAnswer', () => {
  it("reads llama.cpp's embeddings and rerank answers", () => {
    const emb = {
      model: 'm',
      object: 'list',
      usage: { prompt_tokens: 9, total_tokens: 9 },
      data: [{ embedding: [0.1], index: 0, object: 'embedding' }],
    };
    expect(readPoolingAnswer('embeddings', JSON.stringify(emb), 1)).toEqual({ ok: true, promptTokens: 9, items: 1 });
    const rr = {
      model: 'm',
      object: 'list',
      usage: { prompt_tokens: 20, total_tokens: 20 },
      results: [
        { index: 1, relevance_score: 0.5 },
        { index: 0, relevance_score: 0.1 },
      ],
    };
    expect(readPoolingAnswer('rerank', JSON.stringify(rr), 2)).toEqual({ ok: true, promptTokens: 20, items: 2 });
  });

  it("reads vLLM's score answer: data of {index, object: score, score}", () => {
    const sc = {
      id: 'score-1',
      object: 'list',
      model: 'm',
      usage: { prompt_tokens: 30, total_tokens: 30, completion_tokens: 0 },
      data: [
        { index: 0, object: 'score', score: 0.9 },
        { index: 1, object: 'score', score: 0.2 },
      ],
    };
    expect(readPoolingAnswer('score', JSON.stringify(sc), 2)).toEqual({ ok: true, promptTokens: 30, items: 2 });
    expect(readPoolingAnswer('score', JSON.stringify(sc), 3)).toMatchObject({ ok: false, kind: 'answer-count' });
  });

  it("takes vLLM's rerank usage, which carries only total_tokens", () => {
    const rr = { id: 'x', model: 'm', usage: { total_tokens: 14 }, results: [{ index: 0, relevance_score: 0.9 }] };
    expect(readPoolingAnswer('rerank', JSON.stringify(rr), 1)).toMatchObject({ ok: true, promptTokens: 14 });
  });

  it('names malformed JSON, a missing list and a cut batch, each in one line', () => {
    const broken = readPoolingAnswer('embeddings', '{"data": [', 1);
    expect(broken).toMatchObject({ ok: false, kind: 'bad-answer' });
    expect(readPoolingAnswer('rerank', '{"data": []}', 1)).toMatchObject({ ok: false, kind: 'bad-answer' });
    const cut = readPoolingAnswer('embeddings', JSON.stringify({ data: [{}], usage: {} }), 4);
    expect(cut).toMatchObject({ ok: false, kind: 'answer-count' });
    for (const a of [broken, cut]) if (!a.ok) expect(a.error).not.toContain('\n');
  });
});

describe('groupPoolingPrompts', () => {
  const inputs = [1, 2, 3, 4, 5, 6].map((i) => ({ text: `t${i}`, tokens: 10 }));
  it('groups counted inputs into requests of the batch, expected tokens their sum (plus a pair overhead for rerank)', () => {
    const emb = groupPoolingPrompts('embeddings', inputs, 3);
    expect(emb.map((p) => [p.inputs, p.inputLen, p.lengthFromServer])).toEqual([
      [['t1', 't2', 't3'], 30, undefined],
      [['t4', 't5', 't6'], 30, undefined],
    ]);
    expect(groupPoolingPrompts('rerank', inputs, 2, 7).map((p) => p.inputLen)).toEqual([34, 34, 34]);
  });
  it("leaves a rerank request's length to the server when no pair overhead could be measured", () => {
    expect(groupPoolingPrompts('rerank', inputs, 3).every((p) => p.lengthFromServer === true)).toBe(true);
  });
  it("maps a worker's request places to their inputs", () => {
    expect(inputPositions([2, 5], 3)).toEqual([6, 7, 8, 15, 16, 17]);
  });
});
