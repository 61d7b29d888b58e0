import type { ServerResponse } from 'node:http';
import type { SimEngine } from './engine.js';
import { HttpError } from './http.js';
import { checkModel, type ParseContext } from './request-parse.js';
import { tokenize, tokenizeCompletion } from './tokenizer.js';

/** Simulated embedding width: small, so a batch's answer stays cheap to send. */
const EMBED_DIM = 8;

function stringList(value: unknown, field: string): string[] {
  const list = typeof value === 'string' ? [value] : value;
  if (!Array.isArray(list) || list.length === 0 || !list.every((x) => typeof x === 'string')) {
    throw new HttpError(400, `'${field}' must be a string or a non-empty list of strings`);
  }
  return list as string[];
}

/** A made-up unit vector per input (its index and length), so answers differ without costing work. */
function embeddingOf(text: string, index: number): number[] {
  const v = Array.from({ length: EMBED_DIM }, (_, d) => Math.sin(index + 1 + d * (text.length % 97)));
  const norm = Math.hypot(...v) || 1;
  return v.map((x) => Math.round((x / norm) * 1e6) / 1e6);
}

/**
 * POST /v1/embeddings as llama.cpp's tools/server answers it (format_embeddings_response_oaicompat): each input
 * counted with special tokens, `data` with one {embedding, index, object} per input, usage prompt and total tokens.
 */
export function serveEmbeddings(
  engine: SimEngine,
  parse: ParseContext,
  body: Record<string, unknown>,
  res: ServerResponse,
): void {
  checkModel(parse, body);
  const inputs = stringList(body.input, 'input');
  const counts = inputs.map((t) => tokenizeCompletion(t, true).length);
  const tokens = counts.reduce((a, b) => a + b, 0);
  engine.pool(res, tokens, () => ({
    model: engine.model,
    object: 'list',
    usage: { prompt_tokens: tokens, total_tokens: tokens },
    data: inputs.map((t, i) => ({ embedding: embeddingOf(t, i), index: i, object: 'embedding' })),
  }));
}

/**
 * POST /v1/rerank (and /rerank) as llama.cpp answers it (format_response_rerank, format_prompt_rerank without a
 * rerank template): each pair is BOS, query, EOS, document, EOS; results sorted by relevance_score, cut to top_n.
 */
export function serveRerank(
  engine: SimEngine,
  parse: ParseContext,
  body: Record<string, unknown>,
  res: ServerResponse,
): void {
  checkModel(parse, body);
  if (typeof body.query !== 'string') throw new HttpError(400, "'query' must be a string");
  const documents = stringList(body.documents, 'documents');
  const topN = typeof body.top_n === 'number' && body.top_n > 0 ? Math.floor(body.top_n) : documents.length;
  const query = tokenize(body.query).length;
  const tokens = documents.reduce((a, d) => a + 3 + query + tokenize(d).length, 0);
  engine.pool(res, tokens, () => ({
    model: engine.model,
    object: 'list',
    usage: { prompt_tokens: tokens, total_tokens: tokens },
    results: documents
      .map((d, index) => ({ index, relevance_score: Math.round(Math.cos(d.length + index) * 1e6) / 1e6 }))
      .sort((a, b) => b.relevance_score - a.relevance_score)
      .slice(0, topN),
  }));
}

/**
 * POST /v1/score (and /score) as vLLM answers one query against many documents (ScoreTextRequest text_1/text_2, or
 * queries/documents in later versions): `data` with one {index, object: 'score', score} per document, counted as
 * rerank's pairs.
 */
export function serveScore(
  engine: SimEngine,
  parse: ParseContext,
  body: Record<string, unknown>,
  res: ServerResponse,
): void {
  checkModel(parse, body);
  const query = body.text_1 ?? body.queries ?? body.data_1;
  if (typeof query !== 'string') throw new HttpError(400, "'text_1' must be one query string");
  const documents = stringList(body.text_2 ?? body.documents ?? body.data_2, 'text_2');
  const q = tokenize(query).length;
  const tokens = documents.reduce((a, d) => a + 3 + q + tokenize(d).length, 0);
  engine.pool(res, tokens, () => ({
    id: `score-sim${engine.model.length}`,
    object: 'list',
    model: engine.model,
    usage: { prompt_tokens: tokens, total_tokens: tokens, completion_tokens: 0 },
    data: documents.map((d, index) => ({
      index,
      object: 'score',
      score: Math.round(Math.cos(d.length + index) * 1e6) / 1e6,
    })),
  }));
}
