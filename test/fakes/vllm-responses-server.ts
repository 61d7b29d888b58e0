import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A stand-in for vLLM's /v1/responses, written from its protocol (entrypoints/openai/responses/protocol.py and
 * simple_streaming_events.py): `event: <type>` and `data: {...}` pairs, response.created and response.in_progress,
 * output_item.added / content_part.added, one response.reasoning_text.delta per reasoning token, then one
 * response.output_text.delta per answer token, the .done events, and response.completed whose response.usage holds
 * input_tokens, output_tokens and output_tokens_details.reasoning_tokens; no [DONE]. POST /tokenize {messages} ->
 * {count} as vLLM's (one token per word plus one per message). Mode `messages-events` answers Anthropic events instead.
 */
export interface ResponsesServerOptions {
  model?: string;
  reasoningTokens?: number;
  mode?: 'ok' | 'messages-events';
}

const words = (t: string): number => t.split(/\s+/).filter((w) => w !== '').length;
const count = (messages: Array<{ content: string }>): number => messages.reduce((a, m) => a + 1 + words(m.content), 0);

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const parts: Buffer[] = [];
  for await (const c of req) parts.push(c as Buffer);
  return JSON.parse(Buffer.concat(parts).toString('utf8') || '{}') as Record<string, unknown>;
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

function stream(res: ServerResponse, o: Required<ResponsesServerOptions>, body: Record<string, unknown>): void {
  const input = typeof body.input === 'string' ? [{ content: body.input }] : (body.input as Array<{ content: string }>);
  const out = Number(body.max_output_tokens);
  const think = Math.min(o.reasoningTokens, out);
  let seq = 0;
  const ev = (type: string, data: Record<string, unknown>): string =>
    `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq++, ...data })}\n\n`;
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' });
  if (o.mode === 'messages-events') {
    res.end(
      `event: message_start\ndata: ${JSON.stringify({ type: 'message_start', message: { usage: { input_tokens: 1 } } })}\n\n`,
    );
    return;
  }
  const response = { id: 'resp_1', object: 'response', model: o.model, status: 'in_progress', output: [] };
  res.write(ev('response.created', { response }) + ev('response.in_progress', { response }));
  let i = 0;
  const tick = setInterval(() => {
    if (i < out) {
      const reasoning = i < think;
      const type = reasoning ? 'response.reasoning_text.delta' : 'response.output_text.delta';
      res.write(
        ev(type, {
          item_id: reasoning ? 'rs_1' : 'msg_1',
          output_index: reasoning ? 0 : 1,
          content_index: 0,
          delta: ' w',
          ...(reasoning ? {} : { logprobs: [] }),
        }),
      );
      i++;
      return;
    }
    clearInterval(tick);
    const usage = {
      input_tokens: count(input),
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: out,
      output_tokens_details: { reasoning_tokens: think },
      total_tokens: count(input) + out,
    };
    res.end(
      ev('response.output_text.done', { item_id: 'msg_1', output_index: 1, content_index: 0, text: '' }) +
        ev('response.completed', { response: { ...response, status: 'completed', usage } }),
    );
  }, 2);
}

async function route(req: IncomingMessage, res: ServerResponse, o: Required<ResponsesServerOptions>): Promise<void> {
  const path = (req.url ?? '/').split('?')[0];
  if (req.method === 'GET' && path === '/health') return send(res, 200, {});
  if (req.method === 'GET' && path === '/v1/models')
    return send(res, 200, { object: 'list', data: [{ id: o.model, object: 'model', max_model_len: 8192 }] });
  if (req.method !== 'POST') return send(res, 404, { detail: 'Not Found' });
  const body = await readJson(req);
  if (path === '/tokenize' && Array.isArray(body.messages))
    return send(res, 200, { count: count(body.messages as Array<{ content: string }>), max_model_len: 8192 });
  if (path === '/tokenize') return send(res, 200, { count: words(String(body.prompt)), max_model_len: 8192 });
  if (path === '/v1/responses') return stream(res, o, body);
  return send(res, 404, { detail: 'Not Found' });
}

/** Starts the stand-in on a free port of 127.0.0.1. */
export async function startResponsesServer(
  options: ResponsesServerOptions = {},
): Promise<{ url: string; close(): Promise<void> }> {
  const o: Required<ResponsesServerOptions> = { model: 'qwen3', reasoningTokens: 0, mode: 'ok', ...options };
  const server: Server = createServer((req, res) => {
    route(req, res, o).catch((error: unknown) => send(res, 500, { detail: String(error) }));
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
