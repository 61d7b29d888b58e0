import type { PromptMessage } from '../load/prompts.js';

/** Counts the prompt tokens the server will see for a list of chat messages (null when it cannot say). */
export type MessagesCounter = (messages: readonly PromptMessage[]) => Promise<number | null>;

/** A JSON POST to the server (ServerApi.call). */
export type PostJson = (method: 'POST', path: string, body: unknown) => Promise<{ status: number; json: unknown }>;

/**
 * A messages counter from the server's tokenizer: vLLM's (and the simulator's) POST /tokenize with messages, or
 * llama.cpp's /apply-template then /tokenize. Null when the server has neither (no exact count is possible).
 */
export async function messagesCounter(post: PostJson, model: string): Promise<MessagesCounter | null> {
  const vllm: MessagesCounter = async (messages) => {
    const res = await post('POST', '/tokenize', { model, messages, add_generation_prompt: true });
    const count = (res.json as { count?: unknown } | null)?.count;
    return res.status === 200 && typeof count === 'number' ? count : null;
  };
  const llama: MessagesCounter = async (messages) => {
    const t = await post('POST', '/apply-template', { messages });
    const prompt = (t.json as { prompt?: unknown } | null)?.prompt;
    if (t.status !== 200 || typeof prompt !== 'string') return null;
    const res = await post('POST', '/tokenize', { content: prompt, add_special: true, parse_special: true });
    const list = (res.json as { tokens?: unknown } | null)?.tokens;
    return res.status === 200 && Array.isArray(list) ? list.length : null;
  };
  const probe: PromptMessage[] = [{ role: 'user', content: 'hello' }];
  if ((await vllm(probe).catch(() => null)) !== null) return vllm;
  if ((await llama(probe).catch(() => null)) !== null) return llama;
  return null;
}
