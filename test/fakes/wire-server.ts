import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { createBrotliCompress, createDeflate, createDeflateRaw, createGzip } from 'node:zlib';
import type { BrotliCompress, Deflate, DeflateRaw, Gzip } from 'node:zlib';
import type { Clock } from '../../src/core/clock.js';

/**
 * How the wire server frames and wraps its streams: what the SSE standard allows and real proxies do (nginx and
 * Cloudflare compress text/event-stream when told to, flushing per event; gateways redirect and add headers).
 */
export interface WireOptions {
  /** Clock the write times are read on (the client's, so a record's stamps can be held against them). */
  clock: Clock;
  /** Line end of every SSE line (the standard allows all three). */
  lineEnd?: '\n' | '\r\n' | '\r';
  /** A UTF-8 BOM before the first event (allowed by the standard; a decoder must drop it). */
  bom?: boolean;
  /** Token chunks per response, each carrying continuous usage. */
  tokens?: number;
  /** ms between token chunks, on a real timer (the server's own pace). */
  gapMs?: number;
  /** Event data lines sent after `data: [DONE]` (a proxy's stale buffer, a buggy server). */
  afterDone?: string[];
  /** Content-Encoding: the stream compressed and flushed after every event; 'deflate-raw' labels raw deflate 'deflate'. */
  encoding?: 'gzip' | 'deflate' | 'deflate-raw' | 'br' | 'zstd' | 'gzip, br';
  /** A decompression bomb: after the first token, this many zero bytes through the compressor. */
  bombBytes?: number;
  /** Every path but /health answers this redirect. */
  redirect?: { status: number; location: string };
  /** Extra response headers of about this many bytes in all, on every answer (200 of 100 bytes: 20 KB). */
  headerBytes?: number;
}

export interface WireServer {
  url: string;
  /** When each token chunk of the latest stream was handed to the socket (or the compressor), on the clock. */
  tokenWrites: number[];
  /** Streams begun. */
  streams(): number;
  close(): Promise<void>;
}

const MODEL = 'wire-model';

function chunk(i: number, total: number): Record<string, unknown> {
  return {
    id: 'chatcmpl-wire',
    object: 'chat.completion.chunk',
    model: MODEL,
    choices: [{ index: 0, delta: { content: ` w${i}` }, finish_reason: i === total ? 'length' : null }],
    usage: { prompt_tokens: 7, completion_tokens: i, total_tokens: 7 + i },
  };
}

function compressor(encoding: WireOptions['encoding']): Gzip | Deflate | DeflateRaw | BrotliCompress | null {
  if (encoding === 'gzip') return createGzip();
  if (encoding === 'deflate') return createDeflate();
  if (encoding === 'deflate-raw') return createDeflateRaw();
  if (encoding === 'br') return createBrotliCompress();
  return null;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Starts an OpenAI-compatible stand-in whose streams are framed and wrapped as `options` say. */
export async function startWireServer(options: WireOptions): Promise<WireServer> {
  const { clock } = options;
  const tokens = options.tokens ?? 4;
  const end = options.lineEnd ?? '\n';
  const tokenWrites: number[] = [];
  let streams = 0;
  const sockets = new Set<Socket>();

  const extraHeaders = (res: ServerResponse): void => {
    for (let i = 0; i * 100 < (options.headerBytes ?? 0); i++) res.setHeader(`x-filler-${i}`, 'f'.repeat(88));
  };

  const stream = async (res: ServerResponse): Promise<void> => {
    streams++;
    tokenWrites.length = 0;
    const encoding = options.encoding;
    const zip = compressor(encoding);
    res.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      ...(encoding ? { 'content-encoding': encoding === 'deflate-raw' ? 'deflate' : encoding } : {}),
    });
    if (zip) zip.pipe(res);
    const out = (text: string | Buffer): void => {
      if (zip) {
        zip.write(text);
        zip.flush();
      } else res.write(text);
    };
    const event = (data: string): string => `data: ${data}${end}${end}`;
    const role = event(
      JSON.stringify({ object: 'chat.completion.chunk', choices: [{ index: 0, delta: { role: 'assistant' } }] }),
    );
    out(options.bom ? `\uFEFF${role}` : role);
    for (let i = 1; i <= tokens && !res.destroyed; i++) {
      if (options.gapMs) await sleep(options.gapMs);
      tokenWrites.push(clock.nowMs());
      out(event(JSON.stringify(chunk(i, tokens))));
      if (i === 1 && options.bombBytes) out(Buffer.alloc(options.bombBytes));
    }
    out(event('[DONE]'));
    for (const data of options.afterDone ?? []) out(event(data));
    if (zip) zip.end();
    else res.end();
  };

  // JSON answers are compressed as the streams are (a bomb: the JSON, then the zeros).
  const json = (res: ServerResponse, body: unknown): void => {
    const zip = compressor(options.encoding);
    const label = options.encoding === 'deflate-raw' ? 'deflate' : options.encoding;
    res.writeHead(200, { 'content-type': 'application/json', ...(label ? { 'content-encoding': label } : {}) });
    if (!zip) {
      res.end(JSON.stringify(body));
      return;
    }
    zip.pipe(res);
    zip.write(JSON.stringify(body));
    if (options.bombBytes) zip.write(Buffer.alloc(options.bombBytes));
    zip.end();
  };

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    res.on('error', () => undefined);
    extraHeaders(res);
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/health') {
      res.writeHead(200).end();
      return;
    }
    if (options.redirect) {
      res.writeHead(options.redirect.status, { location: options.redirect.location, 'content-type': 'text/plain' });
      res.end('moved\n');
      return;
    }
    if (req.method === 'GET' && path === '/v1/models') {
      json(res, { object: 'list', data: [{ id: MODEL, object: 'model', max_model_len: 4096 }] });
      return;
    }
    req.resume();
    req.on('end', () => {
      if (path === '/tokenize') json(res, { count: 7, max_model_len: 4096 });
      else void stream(res);
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    tokenWrites,
    streams: () => streams,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
