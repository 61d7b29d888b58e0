import { ENDPOINTS, scoresPairs, type PoolingKind } from '../../shared/endpoint-kinds.js';
import { UserError } from '../errors.js';
import { readPoolingAnswer } from './pooling-answer.js';
import { buildPoolingBody } from './pooling-body.js';
import { FULL_COMPAT } from './request-body.js';
import { boundedCount, type PromptCounting, type ServerApi } from './server-api.js';

const SERVE_HINT: Record<PoolingKind, string> = {
  embeddings: 'serve an embedding model (vLLM --task embed, llama.cpp --embeddings) or pick --api chat',
  rerank: 'serve a reranker (vLLM --task score, llama.cpp --reranking) or pick --api chat',
  score: "serve a cross-encoder or reranker on vLLM (--task score; /score is vLLM's own), or pick --api rerank",
};

/**
 * Sends one pooling request of two short inputs before the levels: a server that does not serve the endpoint (404,
 * a generation model's 400) or answers in another shape is named in one line, before any level is built.
 */
export async function probePooling(
  api: ServerApi,
  base: string,
  kind: PoolingKind,
  model: string,
  signal?: AbortSignal,
): Promise<void> {
  const path = ENDPOINTS[kind].path;
  const body = JSON.parse(buildPoolingBody(kind, model, ['hello', 'world'])) as unknown;
  const res = await api.call('POST', path, body, signal);
  if (res.status === 200) {
    const answer = readPoolingAnswer(kind, res.text, 2);
    if (!answer.ok) throw new UserError(`${base}${path}: ${answer.error}`);
    return;
  }
  const detail = res.text.replace(/\s+/g, ' ').trim().slice(0, 160);
  const fix =
    res.status === 404 || res.status === 400 || res.status === 501 ? SERVE_HINT[kind] : "check the server's log";
  throw new UserError(`${base}${path} answered HTTP ${res.status}${detail ? ` (${detail})` : ''}: ${fix}`);
}

/**
 * What a rerank pair adds to its document's own count (the query, BOS/EOS/SEP or the model's rerank template, as
 * llama.cpp's format_prompt_rerank builds it): one single-document request's usage less the document's count. The
 * same for every document of one query, so each request's prompt tokens are known ahead; null where it cannot be told.
 */
async function rerankPairOverhead(
  api: ServerApi,
  kind: PoolingKind,
  model: string,
  counting: PromptCounting,
  signal?: AbortSignal,
): Promise<number | null> {
  const doc = 'The passage measures a served model.';
  const docTokens = await counting.counter(doc, signal);
  const res = await api.call('POST', ENDPOINTS[kind].path, JSON.parse(buildPoolingBody(kind, model, [doc])), signal);
  if (docTokens === null || res.status !== 200) return null;
  const answer = readPoolingAnswer(kind, res.text, 1);
  const pair = answer.ok ? boundedCount(answer.promptTokens, doc) : null;
  return pair !== null && pair >= docTokens ? pair - docTokens : null;
}

/**
 * The count of one pooling input: the server's /tokenize on the text, as its embeddings handler counts it (special
 * tokens added). Without one, embeddings fall back to one single-input request's usage.prompt_tokens; rerank
 * cannot (a pair's count includes the query and the template), so it is refused in one line.
 */
export async function poolingCounter(
  api: ServerApi,
  kind: PoolingKind,
  model: string,
  signal?: AbortSignal,
): Promise<PromptCounting> {
  const counting = await api.tokenCounter('completions', model, FULL_COMPAT, signal);
  if (counting.viaTokenize && scoresPairs(kind)) {
    const pairOverhead = await rerankPairOverhead(api, kind, model, counting, signal);
    return { ...counting, countMessages: undefined, ...(pairOverhead !== null && { pairOverhead }) };
  }
  if (counting.viaTokenize) return { ...counting, countMessages: undefined };
  if (scoresPairs(kind)) {
    throw new UserError(
      `--api ${kind} needs the server's /tokenize to make documents of exact length, and this server has none: serve the reranker with vLLM, SGLang or llama.cpp`,
    );
  }
  return {
    viaTokenize: false,
    counter: async (text, s) => {
      const body = JSON.parse(buildPoolingBody(kind, model, [text])) as unknown;
      const res = await api.call('POST', ENDPOINTS[kind].path, body, s);
      if (res.status !== 200) return null;
      const answer = readPoolingAnswer(kind, res.text, 1);
      return answer.ok ? boundedCount(answer.promptTokens, text) : null;
    },
  };
}
