import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/**
 * A vLLM-like server (word-count tokenizer plus a 7-token template, continuous usage, /health, /tokenize) that can
 * die as a crashed engine does, every socket reset and the port closed, and come back on the same port, as a server
 * under a supervisor (systemd, Kubernetes) does: what a run attached with --url sees of a server it did not start.
 */
export interface ReturningServer {
  url: string;
  /** Completions requests received while up. */
  completions(): number;
  /** Dies when the n-th completions request (counted from the start) arrives: that one and all in flight are reset. */
  dieAtRequest(n: number): void;
  /** Dies once `n` completions responses have been sent whole (nothing in flight is cut). */
  dieAfterResponses(n: number): void;
  /** Resolves once the server has died. */
  dead(): Promise<void>;
  /** Listens again on the same port, as a restarted server. */
  comeBack(): Promise<void>;
  close(): Promise<void>;
}

const TEMPLATE_TOKENS = 7;
const words = (text: string): number => text.split(/\s+/).filter(Boolean).length;

function promptText(body: Record<string, unknown>): string {
  if (typeof body.prompt === 'string') return body.prompt;
  const messages = body.messages as Array<{ content: string }> | undefined;
  return messages?.map((m) => m.content).join(' ') ?? '';
}

/** Starts the server; tokens stream `gapMs` apart (a real timer), each chunk with continuous usage. */
export async function startReturningServer(options: { gapMs?: number } = {}): Promise<ReturningServer> {
  const gapMs = options.gapMs ?? 2;
  let completions = 0;
  let responses = 0;
  let dieAt = Infinity;
  let dieAfter = Infinity;
  let down = false;
  let markDead: () => void = () => undefined;
  let deadP = new Promise<void>((r) => (markDead = r));
  const sockets = new Set<Socket>();

  const die = (): void => {
    if (down) return;
    down = true;
    server.close();
    for (const s of sockets) s.destroy();
    markDead();
  };

  const stream = async (res: ServerResponse, body: Record<string, unknown>): Promise<void> => {
    const prompt = words(promptText(body)) + TEMPLATE_TOKENS;
    const n = Number(body.max_tokens ?? 8);
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const send = (data: unknown): boolean => !res.destroyed && res.write(`data: ${JSON.stringify(data)}\n\n`);
    for (let i = 1; i <= n; i++) {
      await new Promise((r) => setTimeout(r, gapMs));
      if (res.destroyed) return;
      send({
        object: 'chat.completion.chunk',
        choices: [{ index: 0, delta: { content: ` t${i}` }, finish_reason: i === n ? 'length' : null }],
        usage: { prompt_tokens: prompt, completion_tokens: i, total_tokens: prompt + i },
      });
    }
    if (res.destroyed) return;
    // Dies once this answer is out whole: its last bytes are the client's, as a crash just after a response.
    res.end('data: [DONE]\n\n', () => {
      responses++;
      if (responses >= dieAfter) die();
    });
  };

  const handle = (req: IncomingMessage, res: ServerResponse, text: string): void => {
    const path = (req.url ?? '/').split('?')[0];
    const body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
    const json = (value: unknown): void => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(value));
    };
    if (path === '/health') {
      res.writeHead(200).end();
    } else if (path === '/v1/models') {
      json({ object: 'list', data: [{ id: 'returning-model', object: 'model', max_model_len: 4096 }] });
    } else if (path === '/tokenize') {
      json({ count: words(promptText(body)) + TEMPLATE_TOKENS, max_model_len: 4096 });
    } else if (path === '/v1/chat/completions' || path === '/v1/completions') {
      completions++;
      if (completions >= dieAt) die();
      else void stream(res, body);
    } else {
      res.writeHead(404).end();
    }
  };

  const server = createServer((req, res) => {
    res.on('error', () => undefined);
    let text = '';
    req.on('data', (d: Buffer) => (text += String(d)));
    req.on('end', () => handle(req, res, text));
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    if (down) s.destroy();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    completions: () => completions,
    dieAtRequest: (n) => (dieAt = n),
    dieAfterResponses: (n) => (dieAfter = n),
    dead: () => deadP,
    comeBack: async () => {
      dieAt = Infinity;
      dieAfter = Infinity;
      await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
      down = false;
      deadP = new Promise<void>((r) => (markDead = r));
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      if (server.listening) await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
