import { UserError } from '../errors.js';
import type { Prompt, PromptMessage } from '../load/prompts.js';
import { fitText, type TextCount } from './fit-text.js';
import { contextLine, mapParallel, type LevelPromptsInput } from './level-input.js';
import type { FileEntry } from './prompt-file.js';
import type { Workload } from './workload.js';

type FileWorkload = Extract<Workload, { kind: 'file' }>;

/** The count of a message list whose last user message carries `text`. */
function lastUserCount(
  messages: readonly PromptMessage[],
  count: (m: PromptMessage[]) => Promise<number | null>,
): TextCount {
  const at = messages.map((m) => m.role).lastIndexOf('user');
  return (text) => count(messages.map((m, i) => (i === at ? { ...m, content: text } : { ...m })));
}

function withLastUser(messages: readonly PromptMessage[], text: string): PromptMessage[] {
  const at = messages.map((m) => m.role).lastIndexOf('user');
  return messages.map((m, i) => (i === at ? { ...m, content: text } : { ...m }));
}

/**
 * A level's prompts from a prompt file, taken in file order from the level's first record (wrapping round
 * when the run needs more than the file holds). Fixed lengths: each prompt (a message list's last user message) is
 * cut or padded to the level's input length by the server's count; file lengths: counted as they are. Output
 * lengths: the level's, or the file's (output_len, or the ShareGPT reply's token count). A server that cannot count
 * exactly (file lengths only): each prompt goes as it is, its length the server's usage.prompt_tokens afterwards.
 */
export async function filePrompts(workload: FileWorkload, input: LevelPromptsInput): Promise<Prompt[]> {
  const { plan, counter } = input;
  const { entries, path } = workload;
  const countMessages = input.countMessages;
  const needsMessages = entries.some((e) => e.messages);
  const counted = input.viaTokenize;
  if (needsMessages && !countMessages && counted) {
    throw new UserError(
      `--prompts ${path} has message lists, and this server cannot count the tokens of messages (/tokenize with messages): use {"prompt"} lines`,
    );
  }
  // A chat counter wraps a text in a user message: its template tokens are not part of a reply's length.
  const overhead = workload.outputLengths === 'file' && entries.some((e) => e.reply) ? ((await counter('')) ?? 0) : 0;
  const where = (e: FileEntry): string => `--prompts ${path}: record ${e.sourceIndex + 1}`;
  return mapParallel(input, async (i) => {
    const e = entries[((input.firstRecord ?? input.firstIndex) + i) % entries.length] as FileEntry;
    const seed = input.runNonce * 7919 + input.firstIndex + i;
    const count: TextCount = e.messages ? lastUserCount(e.messages, countMessages!) : counter;
    const source = e.messages ? (e.messages.findLast((m) => m.role === 'user')?.content ?? '') : (e.text ?? '');
    let text = source;
    let tokens: number | null;
    if (!counted) {
      tokens = null;
    } else if (workload.promptLengths === 'fixed') {
      const fitted = await fitText(source, plan.inputLen, count, seed);
      text = fitted.text;
      tokens = fitted.tokens;
    } else {
      tokens = await count(source);
    }
    if (tokens === null && counted)
      throw new UserError(
        `${where(e)}: the server's /tokenize gave no count for it: see the server's log (-v), or drop that record`,
      );
    if (workload.promptLengths === 'fixed' && tokens !== null && tokens > plan.inputLen) {
      throw new UserError(
        `${where(e)} cannot be cut to --input-len ${plan.inputLen}: ${e.messages ? 'its other messages alone have' : 'even cut to nothing it has'} ${tokens} tokens; raise --input-len, or use --prompt-lengths file`,
      );
    }
    let outputLen: number | undefined;
    if (workload.outputLengths === 'file') {
      if (e.outputLen !== undefined) outputLen = e.outputLen;
      else if (e.reply !== undefined) outputLen = Math.max(1, ((await counter(e.reply)) ?? 0) - overhead);
      else throw new UserError(`${where(e)} has no output_len: add one, or use --output-lengths fixed`);
    }
    // Fixed lengths expect the level's length exactly (the input-length check shows a fit that missed).
    const inputLen = workload.promptLengths === 'fixed' ? plan.inputLen : (tokens ?? undefined);
    const tooLong =
      inputLen === undefined ? null : contextLine(where(e), inputLen, outputLen ?? plan.outputLen, input.contextTokens);
    if (tooLong)
      throw new UserError(`${tooLong}; use --prompt-lengths fixed with a shorter --input-len, or drop that record`);
    const prompt: Prompt = { text, tokens, meta: { sourceIndex: e.sourceIndex } };
    if (inputLen !== undefined) prompt.inputLen = inputLen;
    else prompt.lengthFromServer = true;
    if (e.messages) prompt.messages = withLastUser(e.messages, text);
    if (outputLen !== undefined) prompt.outputLen = outputLen;
    return prompt;
  });
}
