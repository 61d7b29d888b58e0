import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A stand-in for llama.cpp's llama-server serving a pooling model or the Messages API, written from its tools/server
 * source (server-common.cpp format_embeddings_response_oaicompat, format_response_rerank, format_prompt_rerank,
 * format_anthropic_sse; server-context.cpp's handlers):
 * - /tokenize {content, add_special} -> {tokens}: one token per word, BOS and EOS with add_special (a BERT-like
 *   vocabulary: llama_vocab_get_add_bos and _add_eos true, _add_sep false);
 * - POST /v1/embeddings {input}: each input tokenized with its special tokens; `{model, object: 'list', usage:
 *   {prompt_tokens, total_tokens}, data: [{embedding, index, object: 'embedding'}]}`;
 * - POST /v1/rerank and /rerank {query, documents, top_n}: each pair BOS query EOS document EOS (no rerank template);
 *   results {index, relevance_score} sorted by score and cut to top_n, usage as for embeddings;
 * - POST /v1/messages (stream): `event: X` and `data: {...}` pairs: message_start (usage.input_tokens of the templated
 *   prompt, output_tokens 0), content_block_start, one content_block_delta text_delta per token, content_block_stop,
 *   message_delta (stop_reason max_tokens, usage.output_tokens), message_stop; /apply-template renders the prompt.
 * Hostile modes: `chat-chunks` answers /v1/messages with chat-completions chunks, `malformed-json` cuts every
 * pooling answer short, `cut-batch` answers one embedding fewer than the inputs.
 */
export interface EndpointsServerOptions {
  model?: string;
  mode?: 'ok' | 'chat-chunks' | 'malformed-json' | 'cut-batch';
  nCtx?: number;
}

export interface EndpointsServer {
  url: string;
  close(): Promise<void>;
}

const words = (text: string): number => text.split(/\s+/).filter((w) => w !== '').length;
const special = (text: string): number => words(text) + 2;
const template = (messages: Array<{ role: string; content: string }>): string =>
  messages.map((m) => `<|${m.role}|> ${m.content}`).join(' ') + ' <|assistant|>';

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const parts: Buffer[] = [];
  for await (const c of req) parts.push(c as Buffer);
  return JSON.parse(Buffer.concat(parts).toString('utf8') || '{}') as Record<string, unknown>;
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

function pooled(res: ServerResponse, mode: string, body: unknown): void {
  if (mode !== 'malformed-json') return send(res, 200, body);
  const text = JSON.stringify(body).slice(0, 40);
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
  res.end(text);
}

function embeddings(res: ServerResponse, o: Required<EndpointsServerOptions>, body: Record<string, unknown>): void {
  const inputs = (typeof body.input === 'string' ? [body.input] : body.input) as string[];
  const n = inputs.reduce((a, t) => a + special(t), 0);
  const kept = o.mode === 'cut-batch' && inputs.length > 1 ? inputs.slice(1) : inputs;
  pooled(res, o.mode, {
    model: o.model,
    object: 'list',
    usage: { prompt_tokens: n, total_tokens: n },
    data: kept.map((_, i) => ({ embedding: [0.6, 0.8], index: i, object: 'embedding' })),
  });
}

function rerank(res: ServerResponse, o: Required<EndpointsServerOptions>, body: Record<string, unknown>): void {
  const docs = body.documents as string[];
  const q = words(String(body.query));
  const n = docs.reduce((a, d) => a + 3 + q + words(d), 0);
  const topN = typeof body.top_n === 'number' ? body.top_n : docs.length;
  const results = docs.map((d, index) => ({ index, relevance_score: 1 / (1 + d.length + index) }));
  results.sort((a, b) => b.relevance_score - a.relevance_score);
  pooled(res, o.mode, {
    model: o.model,
    object: 'list',
    usage: { prompt_tokens: n, total_tokens: n },
    results: results.slice(0, topN),
  });
}

const event = (name: string, data: unknown): string => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;

function messages(res: ServerResponse, o: Required<EndpointsServerOptions>, body: Record<string, unknown>): void {
  const msgs = body.messages as Array<{ role: string; content: string }>;
  const system = typeof body.system === 'string' ? [{ role: 'system', content: body.system }] : [];
  // The templated prompt tokenized as /tokenize with add_special does (tokenize_input_prompts).
  const input = special(template([...system, ...msgs]));
  const out = Number(body.max_tokens);
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  if (o.mode === 'chat-chunks') {
    for (let i = 0; i < out; i++)
      res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: ' w' } }] })}\n\n`);
    res.end('data: [DONE]\n\n');
    return;
  }
  let text = event('message_start', {
    type: 'message_start',
    message: {
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      content: [],
      model: o.model,
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: input, output_tokens: 0 },
    },
  });
  text += event('content_block_start', {
    type: 'content_block_start',
    index: 0,
    content_block: { type: 'text', text: '' },
  });
  res.write(text);
  let i = 0;
  const tick = setInterval(() => {
    if (i < out) {
      res.write(
        event('content_block_delta', {
          type: 'content_block_delta',
          index: 0,
          delta: { type: 'text_delta', text: ' w' },
        }),
      );
      i++;
      return;
    }
    clearInterval(tick);
    res.end(
      event('content_block_stop', { type: 'content_block_stop', index: 0 }) +
        event('message_delta', {
          type: 'message_delta',
          delta: { stop_reason: 'max_tokens', stop_sequence: null },
          usage: { output_tokens: out },
        }) +
        event('message_stop', { type: 'message_stop' }),
    );
  }, 2);
}

async function route(req: IncomingMessage, res: ServerResponse, o: Required<EndpointsServerOptions>): Promise<void> {
  const path = (req.url ?? '/').split('?')[0];
  if (req.method === 'GET' && path === '/health') return send(res, 200, { status: 'ok' });
  if (req.method === 'GET' && path === '/v1/models')
    return send(res, 200, { object: 'list', data: [{ id: o.model, object: 'model' }] });
  if (req.method === 'GET' && path === '/props')
    return send(res, 200, { default_generation_settings: { n_ctx: o.nCtx }, total_slots: 4 });
  if (req.method !== 'POST')
    return send(res, 404, { error: { code: 404, message: 'File Not Found', type: 'not_found_error' } });
  const body = await readJson(req);
  if (path === '/tokenize') {
    // No `content` (a vLLM-style {messages} body): llama.cpp tokenizes nothing.
    if (typeof body.content !== 'string') return send(res, 200, { tokens: [] });
    const n = body.add_special === true ? special(String(body.content)) : words(String(body.content));
    return send(res, 200, { tokens: Array.from({ length: n }, (_, i) => i + 1) });
  }
  if (path === '/apply-template')
    return send(res, 200, { prompt: template(body.messages as Array<{ role: string; content: string }>) });
  if (path === '/v1/embeddings' || path === '/embeddings') return embeddings(res, o, body);
  if (path === '/v1/rerank' || path === '/rerank') return rerank(res, o, body);
  if (path === '/v1/messages') return messages(res, o, body);
  return send(res, 404, { error: { code: 404, message: 'File Not Found', type: 'not_found_error' } });
}

/** Starts the stand-in on a free port of 127.0.0.1. */
export async function startEndpointsServer(options: EndpointsServerOptions = {}): Promise<EndpointsServer> {
  const o: Required<EndpointsServerOptions> = { model: 'bge-m3', mode: 'ok', nCtx: 8192, ...options };
  const server: Server = createServer((req, res) => {
    route(req, res, o).catch((error: unknown) =>
      send(res, 500, { error: { code: 500, message: String(error), type: 'server_error' } }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
