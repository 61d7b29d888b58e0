import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the hostile server does with every POST (GET /health and /v1/models answer normally). */
export type HostileMode =
  /** 200 event-stream headers, then nothing, forever. */
  | 'headers-then-silence'
  /** Reads the request and never answers at all. */
  | 'silence'
  /** 200 event-stream, then `data: xxxx…` with no newline, up to `endlessBytes`. */
  | 'endless-line'
  /** 200 text/html, a web page. */
  | 'html-200'
  /** 200 application/json: one whole non-streamed chat completion. */
  | 'json-200'
  /** Three token chunks, then a TCP reset (RST). */
  | 'reset-mid-stream'
  /** Three token chunks, then the socket is closed (FIN) inside the chunked body. */
  | 'close-mid-stream'
  /** Closes the connection on every request without a byte of answer. */
  | 'drop-unanswered'
  /** HTTP 400 whose JSON error message is 60 KB long. */
  | 'huge-error-message'
  /** HTTP 500 whose body never ends. */
  | 'endless-error-body'
  /** A correct stream labelled text/plain (some proxies relabel). */
  | 'sse-as-text-plain';

export interface HostileServer {
  url: string;
  /** Body bytes written so far, over all requests. */
  bytesSent(): number;
  /** Requests received. */
  requests(): number;
  /** Resolves once the first body bytes were written. */
  firstBytes: Promise<void>;
  close(): Promise<void>;
}

function tokenChunk(i: number): string {
  return `data: ${JSON.stringify({ object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: ` t${i}` }, finish_reason: null }] })}\n\n`;
}

/** Starts a server that misbehaves in one chosen way. */
export async function startHostileServer(
  mode: HostileMode,
  options: { endlessBytes?: number } = {},
): Promise<HostileServer> {
  let sent = 0;
  let received = 0;
  const limit = options.endlessBytes ?? 300 * 1024 * 1024;
  let wrote: () => void = () => {};
  const firstBytes = new Promise<void>((resolve) => (wrote = resolve));

  const pump = (res: ServerResponse, piece: Buffer): void => {
    // Writes until the limit or until the client goes, honouring back-pressure.
    const next = (): void => {
      while (!res.destroyed && sent < limit) {
        sent += piece.length;
        const more = res.write(piece);
        wrote();
        if (!more) {
          res.once('drain', next);
          return;
        }
      }
      if (!res.destroyed) res.end();
    };
    next();
  };

  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    received++;
    const sse = { 'content-type': 'text/event-stream', connection: 'keep-alive' };
    switch (mode) {
      case 'headers-then-silence':
        res.writeHead(200, sse);
        res.flushHeaders();
        return;
      case 'silence':
        return;
      case 'endless-line': {
        res.writeHead(200, sse);
        res.write('data: ');
        pump(res, Buffer.alloc(64 * 1024, 'x'));
        return;
      }
      case 'html-200': {
        const page = '<!DOCTYPE html>\n<html><head><title>Login</title></head><body>Please sign in</body></html>\n';
        sent += page.length;
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        res.end(page);
        return;
      }
      case 'json-200': {
        const body = JSON.stringify({
          id: 'chatcmpl-1',
          object: 'chat.completion',
          choices: [{ index: 0, message: { role: 'assistant', content: 'Hello there' }, finish_reason: 'length' }],
          usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 },
        });
        sent += body.length;
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(body);
        return;
      }
      case 'reset-mid-stream': {
        res.writeHead(200, sse);
        const text = [1, 2, 3].map(tokenChunk).join('');
        sent += text.length;
        // Reset only once the three chunks are on the wire, so the client has a response when it breaks.
        res.write(text, () => setTimeout(() => req.socket.resetAndDestroy(), 20));
        return;
      }
      case 'close-mid-stream': {
        res.writeHead(200, sse);
        const text = [1, 2, 3].map(tokenChunk).join('');
        sent += text.length;
        // FIN after the data: TCP delivers the three chunks first, then the client sees the body cut short.
        res.write(text, () => req.socket.end());
        return;
      }
      case 'drop-unanswered':
        req.socket.destroy();
        return;
      case 'huge-error-message': {
        const body = JSON.stringify({
          error: { code: 400, message: 'x'.repeat(60_000), type: 'invalid_request_error' },
        });
        sent += body.length;
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(body);
        return;
      }
      case 'endless-error-body': {
        res.writeHead(500, { 'content-type': 'text/plain' });
        pump(res, Buffer.from('Internal Server Error. '.repeat(2000)));
        return;
      }
      case 'sse-as-text-plain': {
        res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
        const text =
          [1, 2, 3].map(tokenChunk).join('') +
          `data: ${JSON.stringify({ object: 'chat.completion.chunk', choices: [{ index: 0, delta: {}, finish_reason: 'length' }] })}\n\ndata: [DONE]\n\n`;
        sent += text.length;
        res.end(text);
        return;
      }
    }
  };

  const server = createServer((req, res) => {
    // Discovery looks fine (an OpenAI-compatible model list), so the misbehaviour meets the load client.
    if (req.method === 'GET' && req.url === '/v1/models') {
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ object: 'list', data: [{ id: 'm', object: 'model' }] }));
      return;
    }
    if (req.method === 'GET' && req.url === '/health') {
      res.writeHead(200).end();
      return;
    }
    if (req.method !== 'POST') {
      res.writeHead(404).end();
      return;
    }
    // Read the body first, as a real server would, then misbehave.
    req.resume();
    req.on('end', () => handle(req, res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    bytesSent: () => sent,
    firstBytes,
    requests: () => received,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
