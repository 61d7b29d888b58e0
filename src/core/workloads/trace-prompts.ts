import { fillerWords, fit, type Prompt } from '../load/prompts.js';
import { UserError } from '../errors.js';
import { contextLine, mapParallel, type LevelPromptsInput } from './level-input.js';
import { TRACE_BLOCK_TOKENS, type TraceEntry } from './trace.js';
import type { Workload } from './workload.js';

type TraceWorkload = Extract<Workload, { kind: 'trace' }>;

/** The shared text of one hash id's block: the same words wherever that id appears in this run. */
export function blockText(runNonce: number, hashId: number): string {
  // WORDS are one token each: a block of 512 words is about 512 tokens.
  return fillerWords(TRACE_BLOCK_TOKENS, runNonce * 1_000_003 + hashId).join(' ');
}

/**
 * A trace entry's prompt: one shared text per hash id, in order (so requests with the same leading ids share those
 * blocks, and the prefix cache sees what the trace recorded), the last block's text cut or padded so the prompt has
 * exactly the entry's input length by the server's count. Output: the entry's length.
 */
async function tracePrompt(e: TraceEntry, input: LevelPromptsInput): Promise<Prompt> {
  // Whole blocks before the last, as far as they fit with room for the template and the tail.
  const whole = Math.max(0, Math.min(e.hashIds.length - 1, Math.floor((e.inputLen - 16) / TRACE_BLOCK_TOKENS)));
  const head = e.hashIds
    .slice(0, whole)
    .map((h) => blockText(input.runNonce, h))
    .join(' ');
  const tailSeed = input.runNonce * 1_000_003 + (e.hashIds[whole] ?? -1 - e.sourceIndex);
  const make = (f: number): string => [head, ...fillerWords(f, tailSeed)].filter((w) => w.length > 0).join(' ');
  const fitted = await fit(make, e.inputLen, e.inputLen - whole * TRACE_BLOCK_TOKENS - 8, input.counter);
  return {
    text: fitted.text,
    tokens: fitted.tokens,
    inputLen: e.inputLen,
    outputLen: e.outputLen,
    meta: { sourceIndex: e.sourceIndex, ...(e.hashIds.length > 0 ? { group: e.hashIds[0] } : {}) },
  };
}

/** The trace level's prompts: warm-up entries, then every round's, in arrival order. */
export async function tracePrompts(workload: TraceWorkload, input: LevelPromptsInput): Promise<Prompt[]> {
  const used = workload.entries.slice(0, input.count);
  for (const e of used) {
    const tooLong = contextLine(
      `--trace ${workload.path}: record ${e.sourceIndex + 1}`,
      e.inputLen,
      e.outputLen,
      input.contextTokens,
    );
    if (tooLong) throw new UserError(`${tooLong}; serve the model with a longer context, or drop that record`);
  }
  return mapParallel(used.length, input.parallel ?? 16, (i) => tracePrompt(used[i] as TraceEntry, input));
}
