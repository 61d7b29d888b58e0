import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A stand-in written from llama.cpp's server: a fixed number of slots and a FIFO queue behind them, a prefill
 * before the first token, then one write per token; usage in a final `choices: []` chunk; the socket closed after
 * each stream; HTTP 400 with its exceed_context_size_error text when prompt + max_tokens pass the context; its
 * /tokenize {content} -> {tokens} and /apply-template {messages} -> {prompt} (one token a word, no BOS, the template
 * the message texts joined), so workloads that count prompts ahead run on it.
 */
export interface QueuedServerOptions {
  slots: number;
  /** Time a slot spends before the first token (the server's own timer, not a test threshold). */
  prefillMs: number;
  /** Context size in tokens (llama.cpp -c); prompt + max_tokens beyond it is refused. */
  contextSize?: number;
  /** Answer every Nth streamed completion with vLLM's HTTP 500 error object. */
  failEvery?: number;
  model?: string;
}

export interface QueuedServer {
  url: string;
  /** Most requests ever decoding at once (never above slots). */
  peakBusy: number;
  /** Streamed completions served. */
  streamed: number;
  close(): Promise<void>;
}

const words = (text: string): number => text.split(/\s+/).filter(Boolean).length;

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  let text = '';
  for await (const chunk of req) text += String(chunk);
  return text ? (JSON.parse(text) as Record<string, unknown>) : {};
}

function promptOf(body: Record<string, unknown>): string {
  if (typeof body.prompt === 'string') return body.prompt;
  const messages = body.messages as Array<{ content?: unknown }> | undefined;
  return (messages ?? []).map((m) => String(m.content ?? '')).join(' ');
}

/** Starts the stand-in on a free loopback port. */
export async function startQueuedServer(options: QueuedServerOptions): Promise<QueuedServer> {
  const model = options.model ?? 'stand-in';
  const waiting: Array<() => void> = [];
  let busy = 0;
  const state = { peakBusy: 0, streamed: 0 };
  let streamedAsked = 0;
  const acquire = (): Promise<void> =>
    new Promise((resolve) => {
      if (busy < options.slots) {
        busy++;
        state.peakBusy = Math.max(state.peakBusy, busy);
        resolve();
      } else {
        waiting.push(() => {
          state.peakBusy = Math.max(state.peakBusy, busy);
          resolve();
        });
      }
    });
  const release = (): void => {
    const next = waiting.shift();
    if (next) next();
    else busy--;
  };
  // Node's shortest timer (about 1 ms): tokens come fast, yet each is its own write and, on loopback, its own read
  // unless the client falls a whole stream behind.
  const nextToken = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 0));
  const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    res.setHeader('connection', 'close');
    if (req.method === 'GET' && req.url === '/health') {
      res.setHeader('content-type', 'application/json');
      res.end('{"status":"ok"}');
      return;
    }
    if (req.method === 'GET' && req.url === '/v1/models') {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ object: 'list', data: [{ id: model, object: 'model' }] }));
      return;
    }
    if (req.method === 'POST' && (req.url === '/tokenize' || req.url === '/apply-template')) {
      const body = await readJson(req);
      res.setHeader('content-type', 'application/json');
      if (req.url === '/apply-template') res.end(JSON.stringify({ prompt: promptOf(body) }));
      else
        res.end(
          JSON.stringify({
            tokens: String(body.content ?? '')
              .split(/\s+/)
              .filter(Boolean)
              .map(() => 1),
          }),
        );
      return;
    }
    const chat = req.url === '/v1/chat/completions';
    if (req.method !== 'POST' || (!chat && req.url !== '/v1/completions')) {
      res.statusCode = 404;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ error: { code: 404, message: 'File Not Found', type: 'not_found_error' } }));
      return;
    }
    const body = await readJson(req);
    const promptTokens = words(promptOf(body));
    const maxTokens = Number(body.max_tokens ?? 16);
    if (options.contextSize !== undefined && promptTokens + maxTokens > options.contextSize) {
      res.statusCode = 400;
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify({
          error: {
            code: 400,
            message: `request (${promptTokens + maxTokens} tokens) exceeds the available context size (${options.contextSize} tokens), try increasing it`,
            type: 'exceed_context_size_error',
            n_prompt_tokens: promptTokens,
            n_ctx: options.contextSize,
          },
        }),
      );
      return;
    }
    if (body.stream && options.failEvery !== undefined && ++streamedAsked % options.failEvery === 0) {
      res.statusCode = 500;
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify({
          object: 'error',
          message: 'CUDA error: an illegal memory access',
          type: 'InternalServerError',
          code: 500,
        }),
      );
      return;
    }
    const usage = { prompt_tokens: promptTokens, completion_tokens: maxTokens, total_tokens: promptTokens + maxTokens };
    await acquire();
    try {
      if (!body.stream) {
        res.setHeader('content-type', 'application/json');
        const message = { role: 'assistant', content: ' tok'.repeat(maxTokens) };
        res.end(JSON.stringify({ choices: [{ index: 0, message, finish_reason: 'length' }], usage }));
        return;
      }
      await sleep(options.prefillMs);
      res.setHeader('content-type', 'text/event-stream');
      const send = (choices: unknown[], extra: Record<string, unknown> = {}): void => {
        const object = chat ? 'chat.completion.chunk' : 'text_completion';
        res.write(`data: ${JSON.stringify({ id: 'chatcmpl-1', object, model, choices, ...extra })}\n\n`);
      };
      if (chat) send([{ index: 0, delta: { role: 'assistant', content: null }, finish_reason: null }]);
      for (let i = 0; i < maxTokens; i++) {
        const finish = i === maxTokens - 1 ? 'length' : null;
        send([
          chat
            ? { index: 0, delta: { content: ' tok' }, finish_reason: finish }
            : { index: 0, text: ' tok', finish_reason: finish },
        ]);
        await nextToken();
      }
      send([], { usage });
      res.end('data: [DONE]\n\n');
      state.streamed++;
    } finally {
      release();
    }
  };

  const server = createServer({ noDelay: true }, (req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.statusCode = 500;
      res.end(String(error));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    get peakBusy() {
      return state.peakBusy;
    },
    get streamed() {
      return state.streamed;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
