/**
 * The simulator's tokenizer: exact, deterministic and cheap, so that prompt lengths are exact
 * and a client can calibrate them through POST /tokenize as it would against a real engine.
 *
 * Rules (docs/simulator.md): a token is an optional run of whitespace followed by
 * - one CJK character (Han, Hiragana, Katakana, Hangul), or
 * - a run of 1 to 8 letters/digits/marks (longer words are cut every 8 characters), or
 * - one other character (punctuation, symbol, emoji: one code point);
 * whitespace at the very end of the text is one token of its own.
 */

// The whitespace prefix is greedy, so "a  b" is two tokens: "a" and "  b".
const TOKEN_RE =
  /\s*(?:[\p{sc=Han}\p{sc=Hiragana}\p{sc=Katakana}\p{sc=Hangul}]|(?:(?![\p{sc=Han}\p{sc=Hiragana}\p{sc=Katakana}\p{sc=Hangul}])[\p{L}\p{N}\p{M}]){1,8}|[^\s\p{L}\p{N}\p{M}])|\s+/gu;

/** Id of the beginning-of-sequence token every prompt starts with (completions and chat). */
const BOS_ID = 1;
/** Chat template special tokens: <|start|>, <|sep|> (after the role), <|end|>. */
const START_ID = 2;
const SEP_ID = 3;
const END_ID = 4;
const ROLE_IDS: Record<string, number> = { system: 5, user: 6, assistant: 7, tool: 8, developer: 9 };
const OTHER_ROLE_ID = 10;
const FIRST_WORD_ID = 1000;
/** Size of the simulated vocabulary; ordinary pieces hash into [1000, VOCAB_SIZE). */
const VOCAB_SIZE = 128_000;

/** Tokens the chat template adds around every message: <|start|> role <|sep|> ... <|end|>. */
export const CHAT_MESSAGE_OVERHEAD = 4;
/** Tokens the chat template adds once per prompt: BOS plus the generation prompt <|start|> assistant <|sep|>. */
export const CHAT_PROMPT_OVERHEAD = 4;

/** Splits text into token strings (concatenated they give the text back). */
export function tokenPieces(text: string): string[] {
  return text.match(TOKEN_RE) ?? [];
}

/** Number of tokens in plain text (no special tokens). */
export function countTokens(text: string): number {
  if (text.length === 0) return 0;
  TOKEN_RE.lastIndex = 0;
  let n = 0;
  while (TOKEN_RE.exec(text) !== null) n++;
  return n;
}

// FNV-1a over UTF-16 code units: stable across runs and machines.
function pieceId(piece: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < piece.length; i++) {
    h ^= piece.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return FIRST_WORD_ID + ((h >>> 0) % (VOCAB_SIZE - FIRST_WORD_ID));
}

/** Token ids of plain text (no special tokens); deterministic. */
export function tokenize(text: string): number[] {
  return tokenPieces(text).map(pieceId);
}

/** Text content of an OpenAI message: a string, or an array of parts whose text parts count. */
function messageText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((part: unknown) => {
        if (
          part &&
          typeof part === 'object' &&
          'text' in part &&
          typeof (part as { text: unknown }).text === 'string'
        ) {
          return (part as { text: string }).text;
        }
        return '';
      })
      .join('');
  }
  return '';
}

export interface ChatMessage {
  role: string;
  content?: unknown;
}

/** Token ids of a chat prompt after the simulated chat template (BOS, per-message framing, generation prompt). */
export function tokenizeChat(messages: ChatMessage[], addGenerationPrompt = true): number[] {
  const ids: number[] = [BOS_ID];
  for (const m of messages) {
    ids.push(START_ID, ROLE_IDS[m.role] ?? OTHER_ROLE_ID, SEP_ID);
    for (const id of tokenize(messageText(m.content))) ids.push(id);
    ids.push(END_ID);
  }
  if (addGenerationPrompt) ids.push(START_ID, ROLE_IDS.assistant ?? OTHER_ROLE_ID, SEP_ID);
  return ids;
}

/** Token count of a chat prompt: BOS + sum(4 + content tokens) + 3 for the generation prompt. */
export function countChatTokens(messages: ChatMessage[], addGenerationPrompt = true): number {
  let n = 1 + (addGenerationPrompt ? CHAT_PROMPT_OVERHEAD - 1 : 0);
  for (const m of messages) n += CHAT_MESSAGE_OVERHEAD + countTokens(messageText(m.content));
  return n;
}

/** Token ids of a completions prompt (BOS first unless addSpecialTokens is false). */
export function tokenizeCompletion(prompt: string, addSpecialTokens = true): number[] {
  const ids = tokenize(prompt);
  return addSpecialTokens ? [BOS_ID, ...ids] : ids;
}

/**
 * Words the simulated model generates: each is a space plus at most 8 lowercase letters, so each
 * is exactly one token and a generated text re-tokenizes to exactly its completion_tokens.
 */
export const OUTPUT_WORDS: readonly string[] = [
  ' the',
  ' model',
  ' token',
  ' stream',
  ' batch',
  ' cache',
  ' block',
  ' layer',
  ' value',
  ' query',
  ' key',
  ' prompt',
  ' answer',
  ' signal',
  ' kernel',
  ' memory',
  ' clock',
  ' power',
  ' thermal',
  ' server',
  ' client',
  ' request',
  ' engine',
  ' queue',
  ' warm',
  ' round',
  ' sample',
  ' median',
  ' tail',
  ' spread',
  ' latency',
  ' speed',
  ' cost',
  ' price',
  ' hour',
  ' second',
  ' window',
  ' level',
  ' sweep',
  ' bench',
  ' tensor',
  ' matrix',
  ' vector',
  ' scale',
  ' weight',
  ' decode',
  ' prefill',
  ' step',
  ' seed',
  ' random',
  ' exact',
  ' length',
  ' input',
  ' output',
  ' usage',
  ' count',
  ' truth',
  ' check',
  ' pass',
  ' report',
  ' chart',
  ' table',
  ' record',
  ' run',
];
