/**
 * The endpoint kinds servebench loads, declared once: the request path, whether the answer streams tokens (a
 * generation) or comes whole (a pooling model's embeddings or rerank scores), and a line for people. The `--api`
 * choices, the request body, the metrics and checks that apply, and the simulator's routes all read this.
 */
export const ENDPOINT_KINDS = [
  'chat',
  'completions',
  'messages',
  'responses',
  'embeddings',
  'rerank',
  'score',
] as const;

export type EndpointKind = (typeof ENDPOINT_KINDS)[number];

/** The kinds that stream generated tokens (TTFT, TPOT, output length mean something there). */
export type GenerationKind = 'chat' | 'completions' | 'messages' | 'responses';

/** The generation kinds whose stream is not OpenAI's chat chunks: Anthropic's Messages and OpenAI's Responses events. */
export type EventDialect = 'messages' | 'responses';

/** The kinds whose answer is one JSON body per batch of inputs (no tokens are generated). */
export type PoolingKind = Exclude<EndpointKind, GenerationKind>;

/** What servebench knows of one endpoint kind. */
export interface EndpointFacts {
  kind: EndpointKind;
  /** Path under the base URL (vLLM, SGLang, llama.cpp serve them all there). */
  path: string;
  /** 'stream': tokens over SSE; 'whole': one JSON answer per request. */
  answer: 'stream' | 'whole';
  /** For people: what a request of this kind is. */
  describe: string;
}

export const ENDPOINTS: { readonly [K in EndpointKind]: EndpointFacts } = {
  chat: { kind: 'chat', path: '/v1/chat/completions', answer: 'stream', describe: 'chat completions, streamed' },
  completions: {
    kind: 'completions',
    path: '/v1/completions',
    answer: 'stream',
    describe: 'text completions, streamed',
  },
  messages: {
    kind: 'messages',
    path: '/v1/messages',
    answer: 'stream',
    describe: "Anthropic's Messages API, streamed (content_block_delta events)",
  },
  responses: {
    kind: 'responses',
    path: '/v1/responses',
    answer: 'stream',
    describe: "OpenAI's Responses API, streamed (response.output_text.delta events)",
  },
  embeddings: {
    kind: 'embeddings',
    path: '/v1/embeddings',
    answer: 'whole',
    describe: 'embeddings of --batch-size inputs per request',
  },
  rerank: {
    kind: 'rerank',
    path: '/v1/rerank',
    answer: 'whole',
    describe: 'rerank scores of --batch-size documents against one query per request',
  },
  score: {
    kind: 'score',
    path: '/v1/score',
    answer: 'whole',
    describe: "vLLM's score API: one query against --batch-size documents per request (text_1, text_2)",
  },
};

/** The pooling kinds that score query-document pairs (rerank, vLLM's score): each pair adds the query and a template. */
export function scoresPairs(kind: EndpointKind | undefined): boolean {
  return kind === 'rerank' || kind === 'score';
}

/** True for a kind whose answer is one JSON body (embeddings, rerank): nothing streams, no tokens are generated. */
export function isPooling(kind: EndpointKind | undefined): kind is PoolingKind {
  // A damaged run folder may name any API: what is not a known kind is not pooling.
  return kind !== undefined && Object.hasOwn(ENDPOINTS, kind) && ENDPOINTS[kind].answer === 'whole';
}

/** The kind's event dialect when its stream is not chat chunks; null for chat and completions. */
export function eventDialect(kind: EndpointKind): EventDialect | null {
  return kind === 'messages' || kind === 'responses' ? kind : null;
}

/** The kinds that answer whole (pooling models). */
export const POOLING_KINDS: readonly EndpointKind[] = ENDPOINT_KINDS.filter((k) => isPooling(k));

/** The query every rerank request scores its documents against: fixed, so every request's work is alike. */
export const RERANK_QUERY = 'Which passage describes the measurement of a served model best?';
