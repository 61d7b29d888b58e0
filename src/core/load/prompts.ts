import { createRng } from '../rng.js';
import { WORDS } from './words.js';

/** A chat message as a workload sends it (file prompts, ShareGPT, multi-turn history). */
export interface PromptMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/** Where a request sits in a workload other than fixed-length synthetic prompts (recorded per request). */
export interface PromptMeta {
  /** Shared-prefix mode (or a trace's hash ids): the group whose system prompt this request shares. */
  group?: number;
  /** Multi-turn mode: the conversation and its 0-based turn. */
  conversation?: number;
  turn?: number;
  /** Prompt file or trace: the 0-based line of the source entry. */
  sourceIndex?: number;
}

/**
 * The text a request carries, and how many prompt tokens the server will count for it. Workloads may set messages
 * (chat API: sent as they are instead of one user message with `text`), their own output length, and meta.
 */
export interface Prompt {
  text: string;
  tokens: number | null;
  messages?: PromptMessage[];
  /** Prompt tokens this request is meant to have (file lengths, trace); the level's input length when absent. */
  inputLen?: number;
  /** No exact count ahead (a prompt file at its own lengths): the record's expected input is the server's count. */
  lengthFromServer?: boolean;
  /** Output tokens this request asks for; the level's output length when absent. */
  outputLen?: number;
  meta?: PromptMeta;
}

/** Counts the prompt tokens the server will see for a text (null when the server cannot say); `signal` gives up. */
export type TokenCounter = (text: string, signal?: AbortSignal) => Promise<number | null>;

/** Encodes n as `digits` words: a prefix that differs from every other request's at the first tokens. */
export function prefixWords(n: number, digits: number): string[] {
  const base = WORDS.length;
  const out: string[] = [];
  let rest = n;
  for (let i = 0; i < digits; i++) {
    out.push(WORDS[rest % base] as string);
    rest = Math.floor(rest / base);
  }
  return out.reverse();
}

/** `count` seeded filler words (one token each in common tokenizers). */
export function fillerWords(count: number, seed: number): string[] {
  const rng = createRng(seed);
  const words: string[] = [];
  for (let i = 0; i < count; i++) words.push(WORDS[Math.floor(rng() * WORDS.length)] as string);
  return words;
}

/** Builds prompt text: a unique prefix (or none), then `fillerWords` seeded filler words. */
export function composePrompt(prefix: string[] | null, filler: number, seed: number): string {
  const words = fillerWords(filler, seed);
  const head = prefix ? `Request ${prefix.join(' ')}.` : 'Request.';
  return `${head} Continue the story: ${words.join(' ')}`;
}

export interface PromptSetOptions {
  count: number;
  targetTokens: number;
  /** Distinct per run, so a re-run does not ride on the previous run's prefix cache. */
  runNonce: number;
  /** Global index of the first prompt (prompts are unique across the whole run). */
  firstIndex: number;
  uniquePrefix: boolean;
  counter: TokenCounter;
  /** How many token counts to ask for at once. */
  parallel?: number;
  /**
   * Check every prompt with the counter (exact tokenizer endpoint). When false the counter sends real requests,
   * so only a throw-away prompt is measured (it would otherwise seed the prefix cache) and lengths are
   * verified afterwards from each response's usage.prompt_tokens.
   */
  verifyEach?: boolean;
}

/** Words of the per-request unique prefix after the run nonce. */
export const PREFIX_DIGITS = 3;

/**
 * The head that unique prompts of one run share with their neighbours: "Request", the run nonce and every digit word
 * but the last. With the chat template's opening before it, a token-level prefix cache (SGLang's radix tree,
 * llama.cpp's slots) reuses this much of each prompt, and real traffic's shared openings are cached the same way.
 */
export function sharedOpeningText(runNonce: number): string {
  return `Request ${[...prefixWords(runNonce, 2), ...prefixWords(0, PREFIX_DIGITS - 1)].join(' ')}`;
}
const MAX_STEPS = 8;

/** Finds the filler count whose text the counter puts at `target` tokens (or the nearest in 8 steps). */
export async function fit(
  make: (filler: number) => string,
  target: number,
  guess: number,
  counter: TokenCounter,
): Promise<{ text: string; tokens: number | null; filler: number }> {
  let filler = Math.max(0, guess);
  let best: { text: string; tokens: number | null; filler: number } | null = null;
  for (let step = 0; step < MAX_STEPS; step++) {
    const text = make(filler);
    const tokens = await counter(text);
    if (tokens === null) return { text, tokens: null, filler };
    if (!best || Math.abs(tokens - target) < Math.abs((best.tokens ?? 0) - target)) best = { text, tokens, filler };
    if (tokens === target) return best;
    const next = Math.max(0, filler + (target - tokens));
    if (next === filler) break;
    filler = next;
  }
  return best as { text: string; tokens: number | null; filler: number };
}

/**
 * Builds `count` prompts of exactly `targetTokens` server tokens where the server can count them: the filler
 * length is calibrated once, then each prompt is checked and nudged (prefix words may tokenize differently).
 */
export async function buildPrompts(options: PromptSetOptions): Promise<Prompt[]> {
  const { count, targetTokens, runNonce, firstIndex, uniquePrefix, counter } = options;
  const nonce = prefixWords(runNonce, 2);
  const prefixFor = (i: number): string[] | null =>
    uniquePrefix ? [...nonce, ...prefixWords(firstIndex + i, PREFIX_DIGITS)] : null;
  const seedFor = (i: number): number => (uniquePrefix ? runNonce * 7919 + firstIndex + i : runNonce);

  const verifyEach = options.verifyEach ?? true;
  const calibrationPrefix =
    verifyEach || !uniquePrefix ? prefixFor(0) : [...prefixWords(runNonce + 1, 2), ...prefixWords(0, PREFIX_DIGITS)];
  const first = await fit(
    (f) => composePrompt(calibrationPrefix, f, seedFor(0)),
    targetTokens,
    targetTokens - 12,
    counter,
  );
  const prompts: Prompt[] = new Array<Prompt>(count);
  prompts[0] = { text: first.text, tokens: first.tokens };
  if (!verifyEach && uniquePrefix) {
    for (let i = 0; i < count; i++)
      prompts[i] = { text: composePrompt(prefixFor(i), first.filler, seedFor(i)), tokens: null };
    return prompts;
  }
  if (!uniquePrefix) {
    for (let i = 1; i < count; i++) prompts[i] = prompts[0];
    return prompts;
  }
  const parallel = options.parallel ?? 16;
  let next = 1;
  const worker = async (): Promise<void> => {
    while (next < count) {
      const i = next++;
      const make = (f: number): string => composePrompt(prefixFor(i), f, seedFor(i));
      if (first.tokens === null) {
        prompts[i] = { text: make(first.filler), tokens: null };
        continue;
      }
      const fitted = await fit(make, targetTokens, first.filler, counter);
      prompts[i] = { text: fitted.text, tokens: fitted.tokens };
    }
  };
  await Promise.all(Array.from({ length: Math.min(parallel, count) }, worker));
  return prompts;
}
