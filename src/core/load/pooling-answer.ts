import type { PoolingKind } from '../../shared/endpoint-kinds.js';

/** A pooling answer read: the server's prompt-token count (unchecked) and how many items it answered. */
export type PoolingAnswer =
  | { ok: true; promptTokens: unknown; items: number }
  | { ok: false; error: string; kind: 'bad-answer' | 'answer-count' };

const LIST_OF: Record<PoolingKind, 'data' | 'results'> = { embeddings: 'data', rerank: 'results', score: 'data' };

function bad(error: string): PoolingAnswer {
  return { ok: false, error, kind: 'bad-answer' };
}

/**
 * Reads a whole embeddings or rerank answer (llama.cpp tools/server format_embeddings_response_oaicompat and
 * format_response_rerank; vLLM's EmbeddingResponse and RerankResponse): `data` (embeddings) or `results` (rerank),
 * one item per input (vLLM's ScoreResponse: `data` of {index, object: 'score', score}), and `usage.prompt_tokens` (vLLM's rerank usage carries only total_tokens, the same count there).
 */
export function readPoolingAnswer(kind: PoolingKind, text: string, inputs: number): PoolingAnswer {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return bad(
      `the ${kind} answer is no JSON (${JSON.stringify(text.trim().slice(0, 60))}): the server is not serving ${kind}`,
    );
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json))
    return bad(`the ${kind} answer is no JSON object`);
  const list = (json as Record<string, unknown>)[LIST_OF[kind]];
  if (!Array.isArray(list)) return bad(`the ${kind} answer has no '${LIST_OF[kind]}' list`);
  if (list.length !== inputs) {
    return {
      ok: false,
      error: `the server answered ${list.length} ${kind === 'embeddings' ? 'embeddings' : 'scores'} for ${inputs} inputs: it cut the batch; lower --batch-size`,
      kind: 'answer-count',
    };
  }
  const usage = (json as { usage?: unknown }).usage;
  const u = usage && typeof usage === 'object' ? (usage as { prompt_tokens?: unknown; total_tokens?: unknown }) : {};
  return { ok: true, promptTokens: u.prompt_tokens ?? u.total_tokens ?? null, items: list.length };
}
