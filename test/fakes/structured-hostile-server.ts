import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A server that takes structured-output and tool requests and does not honour them, each the way a real one fails:
 * it ignores the schema and answers free text (no support, a silent fallback), breaks the JSON off, answers JSON of
 * the wrong shape, answers text where a tool call was required, or calls the tool with arguments that break its
 * schema. `half-valid` alternates a valid person with a wrong one. Streams chat chunks with continuous usage.
 */
export type StructuredFault =
  'plain-text' | 'broken-json' | 'wrong-type' | 'half-valid' | 'text-not-tool' | 'bad-tool-args' | 'valid-tool';

export interface StructuredHostileServer {
  url: string;
  requests: Array<Record<string, unknown>>;
  close(): Promise<void>;
}

const VALID_PERSON = '{"name":"Ada","age":36,"tags":["math"]}';

/** The answer the fault gives the n-th completion: text, or a tool call's name and arguments. */
function answerOf(fault: StructuredFault, n: number): { text: string } | { tool: string; args: string } {
  switch (fault) {
    case 'plain-text':
      return { text: 'Sure! Here is a person: Ada, 36, likes math.' };
    case 'broken-json':
      return { text: '{"name":"Ada","age":3' };
    case 'wrong-type':
      return { text: '{"name":"Ada","age":"thirty-six","tags":["math"]}' };
    case 'half-valid':
      return { text: n % 2 === 0 ? VALID_PERSON : '{"name":"Ada"}' };
    case 'text-not-tool':
      return { text: 'The weather in Paris is mild today.' };
    case 'bad-tool-args':
      return { tool: 'get_weather', args: '{"city":3,"unit":"kelvin"}' };
    case 'valid-tool':
      return { tool: 'get_weather', args: '{"city":"Paris","unit":"celsius"}' };
  }
}

async function readBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  let text = '';
  for await (const chunk of req) text += String(chunk);
  return text ? (JSON.parse(text) as Record<string, unknown>) : {};
}

const words = (t: string): number => t.split(/\s+/).filter(Boolean).length;

function promptWords(body: Record<string, unknown>): number {
  if (typeof body.prompt === 'string') return words(body.prompt) + 7;
  const messages = (body.messages as Array<{ content: string }> | undefined) ?? [];
  return words(messages.map((m) => m.content).join(' ')) + 7;
}

/** The answer's SSE stream: a role chunk, then 3-character pieces as content or tool-call deltas, usage, [DONE]. */
function stream(res: ServerResponse, body: Record<string, unknown>, answer: ReturnType<typeof answerOf>): void {
  const prompt = promptWords(body);
  const text = 'text' in answer ? answer.text : answer.args;
  const pieces = text.match(/[\s\S]{1,3}/g) ?? [''];
  const out: string[] = [];
  const send = (delta: Record<string, unknown> | null, done: number, finish: string | null = null): void => {
    const usage = { prompt_tokens: prompt, completion_tokens: done, total_tokens: prompt + done };
    const choices = delta ? [{ index: 0, delta, finish_reason: finish }] : [];
    out.push(`data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', choices, usage })}\n\n`);
  };
  send({ role: 'assistant', content: '' }, 0);
  pieces.forEach((p, i) => {
    const last = i === pieces.length - 1;
    const finish = last ? ('tool' in answer ? 'tool_calls' : 'stop') : null;
    if ('text' in answer) send({ content: p }, i + 1, finish);
    else
      send(
        {
          tool_calls: [
            i === 0
              ? { index: 0, id: 'call_0', type: 'function', function: { name: answer.tool, arguments: p } }
              : { index: 0, function: { arguments: p } },
          ],
        },
        i + 1,
        finish,
      );
  });
  send(null, pieces.length);
  out.push('data: [DONE]\n\n');
  res.setHeader('content-type', 'text/event-stream');
  res.end(out.join(''));
}

/** Starts the server on a free port. */
export async function startStructuredHostile(fault: StructuredFault): Promise<StructuredHostileServer> {
  const requests: Array<Record<string, unknown>> = [];
  let completions = 0;
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (req.method === 'GET' && req.url === '/v1/models') {
      res.end(JSON.stringify({ data: [{ id: 'fake-model', max_model_len: 8192 }] }));
      return;
    }
    if (req.method === 'GET') {
      res.end('');
      return;
    }
    const body = await readBody(req);
    if (req.url === '/tokenize') {
      res.end(JSON.stringify({ count: promptWords(body), max_model_len: 8192, tokens: [] }));
      return;
    }
    requests.push(body);
    stream(res, body, answerOf(fault, completions++));
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
