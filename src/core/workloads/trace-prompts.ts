import { fillerWords, fit, type Prompt } from '../load/prompts.js';
import { UserError } from '../errors.js';
import { contextLine, mapParallel, type LevelPromptsInput } from './level-input.js';
import { TRACE_BLOCK_TOKENS, type TraceEntry } from './trace.js';
import type { Workload } from './workload.js';

type TraceWorkload = Extract<Workload, { kind: 'trace' }>;

/** Two numbers mixed into one 32-bit seed (no precision lost to large products). */
export function mixSeed(a: number, b: number): number {
  return (Math.imul((a ^ 0x9e3779b9) >>> 0, 0x85ebca6b) ^ Math.imul((b + 0x7f4a7c15) >>> 0, 0xc2b2ae35)) >>> 0;
}

/** The shared text of one hash id's block: the same words wherever that id appears in this run. */
function blockText(replaySeed: number, hashId: number): string {
  // WORDS are one token each: a block of 512 words is about 512 tokens.
  return fillerWords(TRACE_BLOCK_TOKENS, mixSeed(replaySeed, hashId)).join(' ');
}

/**
 * A trace entry's prompt: one shared text per hash id, in order (so requests with the same leading ids share those
 * blocks, and the prefix cache sees what the trace recorded), the last block's text cut or padded so the prompt has
 * exactly the entry's input length by the server's count. Output: the entry's length.
 */
async function tracePrompt(e: TraceEntry, replaySeed: number, input: LevelPromptsInput): Promise<Prompt> {
  // Whole blocks before the last, as far as they fit with room for the template and the tail.
  const whole = Math.max(0, Math.min(e.hashIds.length - 1, Math.floor((e.inputLen - 16) / TRACE_BLOCK_TOKENS)));
  const head = e.hashIds
    .slice(0, whole)
    .map((h) => blockText(replaySeed, h))
    .join(' ');
  const tailSeed = mixSeed(replaySeed, e.hashIds[whole] ?? -1 - e.sourceIndex);
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

/**
 * The trace level's prompts: the warm-up's (the trace's first entries), then each round's replay, in arrival order.
 * Every replay (and the warm-up) has its own block texts: sharing within a replay is the trace's, and no replay
 * rides on the cache of the one before (nor a run on an earlier run's).
 */
export async function tracePrompts(workload: TraceWorkload, input: LevelPromptsInput): Promise<Prompt[]> {
  const { plan } = workload;
  const used = workload.entries.slice(0, plan.requestsPerRound);
  for (const e of used) {
    const tooLong = contextLine(
      `--trace ${workload.path}: record ${e.sourceIndex + 1}`,
      e.inputLen,
      e.outputLen,
      input.contextTokens,
    );
    if (tooLong) throw new UserError(`${tooLong}; serve the model with a longer context, or drop that record`);
  }
  const base = mixSeed(input.runNonce, input.firstIndex);
  return mapParallel(input, (k) => {
    const replay = k < plan.warmup ? 0 : 1 + Math.floor((k - plan.warmup) / plan.requestsPerRound);
    const entry = k < plan.warmup ? k : (k - plan.warmup) % plan.requestsPerRound;
    return tracePrompt(used[entry] as TraceEntry, mixSeed(base, replay), input);
  });
}
