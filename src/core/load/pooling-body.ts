import { RERANK_QUERY, type PoolingKind } from '../../shared/endpoint-kinds.js';

/**
 * One pooling request's body. Embeddings: `{model, input: [...], encoding_format: 'float'}` (OpenAI's, which vLLM,
 * SGLang and llama.cpp take). Rerank: `{model, query, documents, top_n}` (the Jina/Cohere shape vLLM's /v1/rerank and
 * llama.cpp's tools/server take; top_n = every document, so every score comes back and the answer can be counted).
 * Score: `{model, text_1: query, text_2: [documents]}`, vLLM's ScoreRequest (one query against many documents).
 */
export function buildPoolingBody(kind: PoolingKind, model: string, inputs: readonly string[]): string {
  if (kind === 'embeddings') return JSON.stringify({ model, input: inputs, encoding_format: 'float' });
  // vLLM's /score: every version takes text_1/text_2 (ScoreTextRequest; later ones also queries/documents, data_1/data_2).
  if (kind === 'score') return JSON.stringify({ model, text_1: RERANK_QUERY, text_2: inputs });
  return JSON.stringify({ model, query: RERANK_QUERY, documents: inputs, top_n: inputs.length });
}
