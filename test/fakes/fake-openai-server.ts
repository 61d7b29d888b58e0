import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** How the fake streams: the ways real OpenAI-compatible servers differ. */
export interface FakeOpenAiOptions {
  /** Usage reporting: continuous (vLLM), final separate chunk, on the last choice chunk, or none. */
  usage?: 'continuous' | 'final' | 'last-choice' | 'none';
  roleChunk?: boolean;
  /** Tokens per chunk (a diffusion model streams blocks). */
  tokensPerChunk?: number;
  /** Prompt tokens to report: by default word count + 7 (a chat template's overhead). */
  promptTokens?: (text: string) => number;
  /** Close the connection after every response. */
  closeAfter?: boolean;
  /** HTTP status to answer every completion with (errors). */
  status?: number;
  /** With `status`: completions answered normally before it applies (the connection probe passes). */
  statusAfter?: number;
  /** Answer every Nth completion with HTTP 500. */
  failEvery?: number;
  /** Put an error object in the stream after this many chunks. */
  errorAfterChunks?: number;
  /** Comments and keep-alives between events. */
  keepAlive?: boolean;
  /** Serve /tokenize like vLLM. */
  tokenize?: boolean;
  /** Reject vLLM's extra fields with 400 (a strict OpenAI clone). */
  strict?: boolean;
  model?: string;
}

export interface FakeOpenAiServer {
  url: string;
  requests: Array<Record<string, unknown>>;
  close(): Promise<void>;
}

function countWords(text: string): number {
  return text.split(/\s+/).filter(Boolean).length;
}

function promptText(body: Record<string, unknown>): string {
  if (typeof body.prompt === 'string') return body.prompt;
  const messages = body.messages as Array<{ content: string }> | undefined;
  return messages?.map((m) => m.content).join(' ') ?? '';
}

async function readBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  let text = '';
  for await (const chunk of req) text += String(chunk);
  return text ? (JSON.parse(text) as Record<string, unknown>) : {};
}

/** A minimal OpenAI-compatible server that answers at once, with switchable quirks. */
export async function startFakeOpenAi(options: FakeOpenAiOptions = {}): Promise<FakeOpenAiServer> {
  const usageMode = options.usage ?? 'continuous';
  const perChunk = options.tokensPerChunk ?? 1;
  const countPrompt = options.promptTokens ?? ((t: string) => countWords(t) + 7);
  const requests: Array<Record<string, unknown>> = [];
  const model = options.model ?? 'fake-model';

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (options.closeAfter) res.setHeader('connection', 'close');
    if (req.method === 'GET' && req.url === '/v1/models') {
      res.end(JSON.stringify({ data: [{ id: model }] }));
      return;
    }
    if (req.method === 'GET' && req.url === '/health') {
      res.end('');
      return;
    }
    const body = await readBody(req);
    if (req.url === '/tokenize') {
      if (!options.tokenize) {
        res.statusCode = 404;
        res.end(JSON.stringify({ detail: 'Not Found' }));
        return;
      }
      res.end(JSON.stringify({ count: countPrompt(promptText(body)), max_model_len: 8192, tokens: [] }));
      return;
    }
    requests.push(body);
    const failNow = options.failEvery !== undefined && requests.length % options.failEvery === 0;
    const completions = requests.filter((b) => 'max_tokens' in b || 'messages' in b || 'prompt' in b).length;
    const injected = options.status && options.status !== 200 && completions > (options.statusAfter ?? 0);
    if (injected || failNow) {
      res.statusCode = failNow ? 500 : (options.status as number);
      res.end(JSON.stringify({ error: { message: 'injected failure', code: options.status } }));
      return;
    }
    const so = body.stream_options as Record<string, unknown> | undefined;
    if (options.strict && ('ignore_eos' in body || 'min_tokens' in body || so?.continuous_usage_stats)) {
      res.statusCode = 400;
      res.end(JSON.stringify({ error: { message: 'Unrecognized request argument supplied' } }));
      return;
    }
    const promptTokens = countPrompt(promptText(body));
    const maxTokens = Number(body.max_tokens ?? 16);
    const chat = req.url === '/v1/chat/completions';
    if (!body.stream) {
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify({
          choices: [{ text: 'x', finish_reason: 'length' }],
          usage: { prompt_tokens: promptTokens, completion_tokens: maxTokens },
        }),
      );
      return;
    }
    res.setHeader('content-type', 'text/event-stream');
    const out: string[] = [];
    const usage = (c: number): Record<string, number> => ({
      prompt_tokens: promptTokens,
      completion_tokens: c,
      total_tokens: promptTokens + c,
    });
    const event = (choice: Record<string, unknown> | null, u?: Record<string, number>): void => {
      const obj: Record<string, unknown> = {
        id: 'x',
        object: chat ? 'chat.completion.chunk' : 'text_completion',
        model,
        choices: choice ? [choice] : [],
      };
      if (u) obj.usage = u;
      out.push(`data: ${JSON.stringify(obj)}\n\n`);
      if (options.keepAlive) out.push(': keep-alive\n\n');
    };
    if (chat && options.roleChunk !== false)
      event({ index: 0, delta: { role: 'assistant', content: '' } }, usageMode === 'continuous' ? usage(0) : undefined);
    let produced = 0;
    let chunks = 0;
    while (produced < maxTokens) {
      const n = Math.min(perChunk, maxTokens - produced);
      produced += n;
      chunks++;
      const text = Array.from({ length: n }, () => ' tok').join('');
      const last = produced >= maxTokens;
      const choice = chat
        ? { index: 0, delta: { content: text }, finish_reason: last ? 'length' : null }
        : { index: 0, text, finish_reason: last ? 'length' : null };
      const u = usageMode === 'continuous' || (usageMode === 'last-choice' && last) ? usage(produced) : undefined;
      event(choice, u);
      if (options.errorAfterChunks !== undefined && chunks === options.errorAfterChunks) {
        out.push(`data: ${JSON.stringify({ error: { message: 'injected mid-stream error', code: 500 } })}\n\n`);
        break;
      }
    }
    if (usageMode === 'final' || (usageMode === 'continuous' && so?.include_usage)) event(null, usage(produced));
    out.push('data: [DONE]\n\n');
    res.end(out.join(''));
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      res.statusCode = 500;
      res.end(String(error));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
