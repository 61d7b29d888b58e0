// The OpenAI-compatible completions of the engine stand-ins that speak the common dialect (trtllm-serve.mjs,
// lmdeploy-serve.mjs): a role-only first chat chunk, one token per chunk a millisecond apart, a finish chunk, and
// usage in a `choices: []` chunk when the request asks include_usage (both engines' protocol.py have it). The
// output is max_tokens long (ignore_eos and min_tokens are honoured by both), the prompt counts a token a word.

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const tokensOf = (text) => Math.max(1, String(text).trim().split(/\s+/).filter(Boolean).length);

export function sendJson(res, status, body) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

/** Reads a JSON body; undefined (after answering 400) when it is none. */
async function body(req, res) {
  let raw = '';
  for await (const chunk of req) raw += chunk;
  try {
    return JSON.parse(raw);
  } catch {
    sendJson(res, 400, { object: 'error', message: 'invalid JSON body', type: 'BadRequestError', code: 400 });
    return undefined;
  }
}

/**
 * Answers one /v1/chat/completions or /v1/completions request. `stats` counts what the engine's metrics report:
 * running, waiting (beyond `slots`), promptTokens, generationTokens, requests.
 */
export async function complete(req, res, { api, model, stats, slots = 64 }) {
  const b = await body(req, res);
  if (b === undefined) return;
  const prompt = api === 'chat' ? (b.messages ?? []).map((m) => String(m.content ?? '')).join(' ') : String(b.prompt);
  const nPrompt = tokensOf(prompt) + (api === 'chat' ? 6 : 0);
  const nOut = Number(b.max_tokens ?? b.max_completion_tokens ?? 16);
  stats.waiting++;
  while (stats.running >= slots) await sleep(1);
  stats.waiting--;
  stats.running++;
  stats.promptTokens += nPrompt;
  const id = `cmpl-${Math.random().toString(36).slice(2)}`;
  const created = Math.floor(Date.now() / 1000);
  const usage = { prompt_tokens: nPrompt, completion_tokens: nOut, total_tokens: nPrompt + nOut };
  try {
    if (!b.stream) {
      await sleep(nOut);
      stats.generationTokens += nOut;
      const text = ' tok'.repeat(nOut);
      return sendJson(res, 200, {
        id,
        object: api === 'chat' ? 'chat.completion' : 'text_completion',
        created,
        model,
        choices: [
          api === 'chat'
            ? { index: 0, message: { role: 'assistant', content: text }, finish_reason: 'length' }
            : { index: 0, text, finish_reason: 'length' },
        ],
        usage,
      });
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const object = api === 'chat' ? 'chat.completion.chunk' : 'text_completion';
    const send = (choices, extra = {}) =>
      res.write(`data: ${JSON.stringify({ id, object, created, model, choices, ...extra })}\n\n`);
    const choice = (text, finish) =>
      api === 'chat'
        ? { index: 0, delta: text === undefined ? {} : { content: text }, finish_reason: finish }
        : { index: 0, text: text ?? '', finish_reason: finish };
    if (api === 'chat') send([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]);
    for (let i = 0; i < nOut; i++) {
      await sleep(1);
      stats.generationTokens++;
      send([choice(' tok', null)]);
    }
    send([choice(undefined, 'length')]);
    if (b.stream_options?.include_usage) send([], { usage });
    res.end('data: [DONE]\n\n');
  } finally {
    stats.running--;
    stats.requests++;
  }
}

/** Fresh counters for complete(). */
export const newStats = () => ({ running: 0, waiting: 0, promptTokens: 0, generationTokens: 0, requests: 0 });
