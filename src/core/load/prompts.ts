import { createRng } from '../rng.js';
import { WORDS } from './words.js';

/** A chat message as a workload sends it (file prompts, ShareGPT, multi-turn history). */
export interface PromptMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/** Where a request sits in a workload other than fixed-length synthetic prompts (recorded per request). */
interface PromptMeta {
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
  /** Calibration could not make `tokens` the length asked for: why, for the user (see fit). */
  inexact?: string;
  /** Pooling endpoints: the request's inputs (embeddings) or documents (rerank), each a prompt of its own. */
  inputs?: string[];
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
  /** Told the prompts built so far after each one that needed the counter (progress of a long build). */
  onBuilt?: (built: number) => void;
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
/** Counts asked of the server while fitting one text. */
const MAX_STEPS = 16;

/**
 * Pieces of one token each in common vocabularies, tried in order when no whole number of filler words makes the
 * target (the words cost several tokens each in a small or byte-level vocabulary): ' a' is one token wherever BPE
 * or SentencePiece merged a space with a letter, '.' in a byte-level vocabulary without merges. Each is measured
 * before it is trusted.
 */
export const PADS: readonly string[] = [' a', '.', ' I', ',', ' x'];

/** A text fitted to a token count: the filler words it took, a pad after them, and why it is not exact, if not. */
export interface FittedPrompt {
  text: string;
  tokens: number | null;
  filler: number;
  /** One-token pieces appended after the filler words (empty when the words alone hit the target). */
  padding: string;
  /** Set when the count is not the target: why, in words for the user. */
  inexact?: string;
}

/** The filler counts measured so far, with the nearest below and above the target. */
interface Bracket {
  seen: Map<number, number>;
  below?: number;
  above?: number;
}

function bracketOf(seen: Map<number, number>, target: number): Bracket {
  const b: Bracket = { seen };
  for (const [f, t] of seen) {
    if (t < target && (b.below === undefined || f > b.below)) b.below = f;
    if (t > target && (b.above === undefined || f < b.above)) b.above = f;
  }
  return b;
}

/** Tokens per filler word, from the two measured counts nearest the target (1 until two are known). */
function wordCost(seen: Map<number, number>, filler: number): number {
  const others = [...seen.keys()]
    .filter((f) => f !== filler)
    .sort((a, b) => Math.abs(a - filler) - Math.abs(b - filler));
  const other = others[0];
  if (other === undefined) return 1;
  const slope = ((seen.get(filler) as number) - (seen.get(other) as number)) / (filler - other);
  return slope > 0 ? slope : 1;
}

/** The next filler count to try: a step at the measured cost per word, kept inside the bracket; null when stuck. */
function nextFiller(b: Bracket, target: number, filler: number): number | null {
  const { below, above } = b;
  if (below !== undefined && above !== undefined && above - below <= 1) return null;
  const tokens = b.seen.get(filler) as number;
  let next = Math.max(0, filler + Math.round((target - tokens) / wordCost(b.seen, filler)));
  if (next === filler) next = filler + Math.sign(target - tokens);
  const inside = (below === undefined || next > below) && (above === undefined || next < above);
  if (!inside) {
    if (below !== undefined && above !== undefined) next = Math.floor((below + above) / 2);
    else if (below !== undefined) next = below + 1;
    else if (above !== undefined) next = above - 1;
  }
  return next < 0 || b.seen.has(next) ? null : next;
}

/**
 * Finds the filler count whose text the counter puts at `target` tokens. Each step moves by the measured cost of a
 * filler word (one token each in common vocabularies, several in small ones), inside the counts already seen to be
 * below and above; when no whole number of words hits the target, the count just below it is topped up with
 * one-token pads (PADS, measured). Returns the nearest it found, with why, when it cannot be exact.
 */
export async function fit(
  make: (filler: number) => string,
  target: number,
  guess: number,
  counter: TokenCounter,
): Promise<FittedPrompt> {
  const seen = new Map<number, number>();
  let best: FittedPrompt | null = null;
  let asked = 0;
  const consider = (text: string, tokens: number, filler: number, padding: string): FittedPrompt | null => {
    if (!best || Math.abs(tokens - target) < Math.abs((best.tokens ?? 0) - target))
      best = { text, tokens, filler, padding };
    return tokens === target ? best : null;
  };
  let filler: number | null = Math.max(0, guess);
  while (filler !== null && asked < MAX_STEPS) {
    const text = make(filler);
    const tokens = await counter(text);
    asked++;
    if (tokens === null) return { text, tokens: null, filler, padding: '' };
    seen.set(filler, tokens);
    const exact = consider(text, tokens, filler, '');
    if (exact) return exact;
    filler = nextFiller(bracketOf(seen, target), target, filler);
  }
  const { below } = bracketOf(seen, target);
  const short = below === undefined ? 0 : target - (seen.get(below) as number);
  if (below !== undefined) {
    for (const pad of PADS) {
      if (asked >= MAX_STEPS) break;
      const padding = pad.repeat(short);
      const text = make(below) + padding;
      const tokens = await counter(text);
      asked++;
      if (tokens === null) break;
      const exact = consider(text, tokens, below, padding);
      if (exact) return exact;
    }
  }
  const found = best as unknown as FittedPrompt;
  return { ...found, inexact: inexactWhy(seen, target, found, below) };
}

/** Why fit stopped short of the target, in one clause. */
function inexactWhy(seen: Map<number, number>, target: number, best: FittedPrompt, below: number | undefined): string {
  const base = seen.get(0);
  if (below === undefined && base !== undefined && base > target)
    return `the prompt's fixed part (template and opening words) alone is ${base} tokens, more than ${target}`;
  const fillers = [...seen.keys()].filter((f) => f > 0);
  const cost = fillers.length > 0 ? Math.max(...fillers.map((f) => wordCost(seen, f))) : 1;
  return (
    `prompt calibration reached ${best.tokens} tokens, not ${target}: the filler words cost about ` +
    `${Number(cost.toFixed(1))} tokens each in this model's vocabulary and no one-token pad ` +
    `(${PADS.map((p) => `'${p}'`).join(', ')}) made up the rest`
  );
}

/**
 * A prompt whose text is composed again, the same, each time it is read: a level holds each prompt's fitted length,
 * not its text (a request's body is built from it when it is sent).
 */
function composedPrompt(compose: () => string, tokens: number | null, inexact?: string): Prompt {
  const prompt: Prompt = {
    tokens,
    get text(): string {
      return compose();
    },
  };
  if (inexact) prompt.inexact = inexact;
  return prompt;
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
  prompts[0] = { text: first.text, tokens: first.tokens, ...(first.inexact ? { inexact: first.inexact } : {}) };
  if (!verifyEach && uniquePrefix) {
    // Counted only by sending them, the other prompts keep the calibrated filler; their own prefix words may cost
    // other token counts where the vocabulary splits words (the calibration needed pads to say so).
    const inexact =
      first.inexact ??
      (first.padding
        ? "the filler words cost several tokens each in this model's vocabulary, and this server counts a prompt only by sending it: each prompt's own unique prefix may move its length by a few tokens"
        : undefined);
    const { filler, padding } = first;
    for (let i = 0; i < count; i++)
      prompts[i] = composedPrompt(() => composePrompt(prefixFor(i), filler, seedFor(i)) + padding, null, inexact);
    return prompts;
  }
  if (!uniquePrefix) {
    for (let i = 1; i < count; i++) prompts[i] = prompts[0];
    return prompts;
  }
  const parallel = options.parallel ?? 16;
  let next = 1;
  let built = 1;
  options.onBuilt?.(built);
  const worker = async (): Promise<void> => {
    while (next < count) {
      const i = next++;
      const make = (f: number): string => composePrompt(prefixFor(i), f, seedFor(i));
      if (first.tokens === null) {
        const filler = first.filler;
        prompts[i] = composedPrompt(() => make(filler), null);
        continue;
      }
      const { filler, padding, tokens, inexact } = await fit(make, targetTokens, first.filler, counter);
      prompts[i] = composedPrompt(() => make(filler) + padding, tokens, inexact);
      options.onBuilt?.(++built);
    }
  };
  await Promise.all(Array.from({ length: Math.min(parallel, count) }, worker));
  return prompts;
}
