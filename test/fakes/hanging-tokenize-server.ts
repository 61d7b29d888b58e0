import { createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/**
 * A vLLM-like /tokenize (word count plus a 7-token template) that answers its first `answered` calls and then holds
 * every later one open without a byte, as a server stalled under load does: a cancel must not wait for them.
 */
export interface HangingTokenizeServer {
  url: string;
  /** Resolves once `n` calls are held open. */
  held(n: number): Promise<void>;
  /** Resolves once every held call's connection was closed by the client. */
  allReleased(): Promise<void>;
  close(): Promise<void>;
}

export async function startHangingTokenizeServer(answered: number): Promise<HangingTokenizeServer> {
  let calls = 0;
  let holding = 0;
  let waiters: Array<() => void> = [];
  const notify = (): void => {
    for (const w of waiters.splice(0)) w();
  };
  const sockets = new Set<Socket>();
  const words = (t: string): number => t.split(/\s+/).filter(Boolean).length;

  const server = createServer((req, res) => {
    res.on('error', () => undefined);
    const path = (req.url ?? '/').split('?')[0];
    let text = '';
    req.on('data', (d: Buffer) => (text += String(d)));
    req.on('end', () => {
      const json = (value: unknown): void => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(value));
      };
      if (path === '/health') res.writeHead(200).end();
      else if (path === '/v1/models') json({ data: [{ id: 'hang-model', max_model_len: 8192 }] });
      else if (path === '/tokenize') {
        if (++calls <= answered) {
          const body = JSON.parse(text) as { prompt?: string; messages?: Array<{ content: string }> };
          const prompt = body.prompt ?? body.messages?.map((m) => m.content).join(' ') ?? '';
          json({ count: words(prompt) + 7 });
          return;
        }
        holding++;
        notify();
        res.on('close', () => {
          holding--;
          notify();
        });
      } else if (path === '/v1/chat/completions') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        const usage = { prompt_tokens: 8, completion_tokens: 1, total_tokens: 9 };
        const chunk = { choices: [{ index: 0, delta: { content: 'hi' }, finish_reason: 'length' }], usage };
        res.end(`data: ${JSON.stringify(chunk)}\n\ndata: [DONE]\n\n`);
      } else res.writeHead(404).end();
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const until = async (done: () => boolean): Promise<void> => {
    while (!done()) await new Promise<void>((r) => waiters.push(r));
  };
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    held: (n) => until(() => holding >= n),
    allReleased: () => until(() => holding === 0),
    close: async () => {
      waiters = [];
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
