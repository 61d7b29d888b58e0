import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * How the stand-in lies. It streams vLLM's shape (role chunk, one chunk per `tokensPerChunk` tokens, usage in a final
 * `choices: []` chunk, [DONE]) and answers vLLM's /tokenize ({count}, one token a word); each mode breaks one count.
 */
export type LyingMode =
  /** Truthful: usage matches what streamed. */
  | 'honest'
  /** No usage at all (a server that ignores stream_options): legitimate, counted from chunks and marked estimated. */
  | 'no-usage'
  /** completion_tokens 2 while max_tokens chunks of one token streamed. */
  | 'completion-below-chunks'
  /** completion_tokens 1,000,000 (far above max_tokens). */
  | 'completion-huge'
  /** completion_tokens 1e308. */
  | 'completion-1e308'
  /** completion_tokens written as 1e400 (JSON.parse reads Infinity). */
  | 'completion-infinite'
  /** completion_tokens -5. */
  | 'completion-negative'
  /** Every count sent as a string ("8"), cached_tokens "NaN": no numbers at all. */
  | 'counts-as-strings'
  /** Continuous usage whose completion_tokens stays at 2 on every chunk. */
  | 'usage-stuck'
  /** prompt_tokens 10^12. */
  | 'prompt-huge'
  /** cached_tokens 100x prompt_tokens. */
  | 'cached-above-prompt'
  /** Token chunks with `choices: null` (no usage in them); a correct final usage. */
  | 'choices-null'
  /** delta.content is a number. */
  | 'content-number'
  /** delta.content is an object. */
  | 'content-object'
  /** Token chunks whose delta is null: no text at all, while usage counts every token. */
  | 'delta-null'
  /** Token chunks whose delta is empty ({}): no text at all, while usage counts every token. */
  | 'delta-empty'
  /** /tokenize answers count -1,000,000,000 (the streams are honest). */
  | 'tokenize-negative'
  /** /tokenize answers count 10^15. */
  | 'tokenize-huge';

export interface LyingServerOptions {
  /** Tokens in each text chunk (several per chunk is legitimate: speculative decoding, diffusion blocks). */
  tokensPerChunk?: number;
  model?: string;
}

export interface LyingServer {
  url: string;
  /** Streamed completions served. */
  streamed(): number;
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

/** The usage object's JSON for a mode (raw text, so that 1e400 reaches the client as written). */
function usageJson(mode: LyingMode, promptTokens: number, completionTokens: number): string {
  const usage = (completion: string, prompt = String(promptTokens), cached?: number): string =>
    `{"prompt_tokens":${prompt},"completion_tokens":${completion},"total_tokens":${promptTokens + completionTokens}` +
    (cached !== undefined ? `,"prompt_tokens_details":{"cached_tokens":${cached}}` : '') +
    '}';
  switch (mode) {
    case 'completion-below-chunks':
      return usage('2');
    case 'completion-huge':
      return usage('1000000');
    case 'completion-1e308':
      return usage('1e308');
    case 'completion-infinite':
      return usage('1e400');
    case 'completion-negative':
      return usage('-5');
    case 'counts-as-strings':
      return `{"prompt_tokens":"${promptTokens}","completion_tokens":"${completionTokens}","prompt_tokens_details":{"cached_tokens":"NaN"}}`;
    case 'usage-stuck':
      return usage('2');
    case 'prompt-huge':
      return usage(String(completionTokens), '1000000000000');
    case 'cached-above-prompt':
      return usage(String(completionTokens), String(promptTokens), promptTokens * 100);
    default:
      return usage(String(completionTokens));
  }
}

/** One text chunk's delta for a mode. */
function deltaJson(mode: LyingMode, text: string): string {
  if (mode === 'content-number') return '{"content":42}';
  if (mode === 'content-object') return `{"content":{"text":${JSON.stringify(text)}}}`;
  if (mode === 'delta-null') return 'null';
  if (mode === 'delta-empty') return '{}';
  return `{"content":${JSON.stringify(text)}}`;
}

/** Starts the stand-in on a free loopback port. */
export async function startLyingServer(mode: LyingMode, options: LyingServerOptions = {}): Promise<LyingServer> {
  const model = options.model ?? 'liar';
  const perChunk = options.tokensPerChunk ?? 1;
  let streamed = 0;

  const stream = async (res: ServerResponse, body: Record<string, unknown>): Promise<void> => {
    const promptTokens = words(promptOf(body));
    const maxTokens = Number(body.max_tokens ?? 16);
    res.setHeader('content-type', 'text/event-stream');
    const write = (json: string): void => void res.write(`data: ${json}\n\n`);
    const head = `"id":"chatcmpl-1","object":"chat.completion.chunk","model":"${model}"`;
    write(`{${head},"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`);
    let sent = 0;
    while (sent < maxTokens) {
      const n = Math.min(perChunk, maxTokens - sent);
      sent += n;
      const finish = sent === maxTokens ? '"length"' : 'null';
      const text = ' tok'.repeat(n);
      const usage = mode === 'usage-stuck' ? `,"usage":${usageJson(mode, promptTokens, sent)}` : '';
      const choices =
        mode === 'choices-null' ? 'null' : `[{"index":0,"delta":${deltaJson(mode, text)},"finish_reason":${finish}}]`;
      write(`{${head},"choices":${choices}${usage}}`);
      // Each chunk its own write, a timer apart: tokens come over time.
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    if (mode !== 'no-usage') write(`{${head},"choices":[],"usage":${usageJson(mode, promptTokens, maxTokens)}}`);
    res.end('data: [DONE]\n\n');
    streamed++;
  };

  const tokenizeAnswer = (body: Record<string, unknown>): number => {
    if (mode === 'tokenize-negative') return -1_000_000_000;
    if (mode === 'tokenize-huge') return 1e15;
    return words(promptOf(body));
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const json = (status: number, value: unknown): void => {
      res.statusCode = status;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(value));
    };
    if (req.method === 'GET' && req.url === '/health') return json(200, { status: 'ok' });
    if (req.method === 'GET' && req.url === '/v1/models')
      return json(200, { object: 'list', data: [{ id: model, object: 'model' }] });
    if (req.method === 'POST' && req.url === '/tokenize') {
      const body = await readJson(req);
      return json(200, { count: tokenizeAnswer(body), max_model_len: 4096 });
    }
    if (req.method !== 'POST' || req.url !== '/v1/chat/completions')
      return json(404, { error: { message: 'Not Found', type: 'not_found_error' } });
    const body = await readJson(req);
    if (!body.stream) {
      const promptTokens = words(promptOf(body));
      const maxTokens = Number(body.max_tokens ?? 16);
      const message = { role: 'assistant', content: ' tok'.repeat(maxTokens) };
      const usage = {
        prompt_tokens: promptTokens,
        completion_tokens: maxTokens,
        total_tokens: promptTokens + maxTokens,
      };
      return json(200, { choices: [{ index: 0, message, finish_reason: 'length' }], usage });
    }
    await stream(res, body);
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
    streamed: () => streamed,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
