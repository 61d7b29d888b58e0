import { UserError } from '../errors.js';
import { buildPrompts, type Prompt } from '../load/prompts.js';
import { filePrompts } from './file-prompts.js';
import type { LevelPromptsInput } from './level-input.js';
export type { LevelPromptsInput } from './level-input.js';
import { sharedPrefixPrompts } from './shared-prefix.js';
import { tracePrompts } from './trace-prompts.js';

/**
 * A level's prompts for the run's workload: synthetic fixed-length prompts (buildPrompts, the default, unchanged),
 * a prompt file's, shared-prefix groups', or a trace's. Workloads other than synthetic need the server's exact
 * token count (/tokenize): they cannot calibrate with real requests without filling the prefix cache. The one
 * exception is a prompt file at its own lengths, which needs no count ahead (each request's is the server's).
 */
export async function buildLevelPrompts(levelInput: LevelPromptsInput): Promise<Prompt[]> {
  const input = withSignal(levelInput);
  try {
    return await promptsOf(input);
  } catch (error) {
    // A cancel (or the server's death) cut a count short: the level is dropped, not failed.
    if (input.signal?.aborted) return [];
    throw error;
  }
}

/**
 * Every count of the level's prompts takes the level's signal, whatever the workload: a cancel during calibration
 * ends the /tokenize calls in flight at once, instead of waiting for their answers (or --timeout).
 */
function withSignal(input: LevelPromptsInput): LevelPromptsInput {
  const { signal } = input;
  if (!signal) return input;
  const countMessages = input.countMessages;
  return {
    ...input,
    counter: (text, s) => input.counter(text, s ?? signal),
    countMessages: countMessages ? (messages, s) => countMessages(messages, s ?? signal) : null,
  };
}

async function promptsOf(input: LevelPromptsInput): Promise<Prompt[]> {
  const { workload } = input;
  if (workload.kind === 'synthetic' && input.positions) return syntheticAt(input, input.positions);
  if (workload.kind === 'synthetic') {
    return buildPrompts({
      count: input.count,
      targetTokens: input.plan.inputLen,
      runNonce: input.runNonce,
      firstIndex: input.firstIndex,
      uniquePrefix: input.uniquePrefix,
      counter: input.counter,
      verifyEach: input.viaTokenize,
      onBuilt: input.onBuilt,
    });
  }
  const flag = workload.kind === 'file' ? '--prompts' : workload.kind === 'trace' ? '--trace' : '--prefix-groups';
  if (!input.viaTokenize) {
    if (workload.kind === 'file' && workload.promptLengths === 'file') return filePrompts(workload, input);
    throw new UserError(noExactCount(flag, workload, input));
  }
  if (workload.kind === 'file') return filePrompts(workload, input);
  if (workload.kind === 'shared-prefix') return sharedPrefixPrompts(workload, input);
  return tracePrompts(workload, input);
}

/**
 * Synthetic prompts at some places of the level: each place's prompt depends only on its index in the run, so each
 * stretch of consecutive places is built as the prompts of its own first index.
 */
async function syntheticAt(input: LevelPromptsInput, positions: readonly number[]): Promise<Prompt[]> {
  const out: Prompt[] = [];
  const { onBuilt } = input;
  for (let i = 0; i < positions.length && !input.signal?.aborted;) {
    let j = i + 1;
    while (j < positions.length && positions[j] === (positions[j - 1] as number) + 1) j++;
    const before = out.length;
    const built = await buildLevelPrompts({
      ...input,
      positions: undefined,
      onBuilt: onBuilt ? (n) => onBuilt(before + n) : undefined,
      count: j - i,
      firstIndex: input.firstIndex + (positions[i] as number),
    });
    out.push(...built);
    i = j;
  }
  return out;
}

/** The one-line refusal of a workload on a server that cannot count its prompts exactly ahead, with the fixes. */
function noExactCount(flag: string, workload: LevelPromptsInput['workload'], input: LevelPromptsInput): string {
  const fixes: string[] = [];
  const chatOnly = workload.kind === 'file' && workload.entries.some((e) => e.messages);
  if (input.completionsExact && !chatOnly) fixes.push('--api completions (its /tokenize counts prompt text exactly)');
  if (workload.kind === 'file')
    fixes.push("--prompt-lengths file (each prompt as it is, its length the server's count)");
  fixes.push('synthetic prompts');
  if (input.tokenizeAnswer && !input.completionsExact) {
    return `${flag} needs the server's /tokenize to count each prompt; ${input.tokenizeAnswer}: a proxy or login page in front of the server? Point --url at the server itself, or use ${fixes.join(', or ')}`;
  }
  const server = input.completionsExact
    ? "this server's /tokenize takes no chat messages"
    : 'this server has none (vLLM, SGLang, llama.cpp and the simulator have it)';
  return `${flag} needs the server's /tokenize to count each prompt; ${server}: use ${fixes.join(', or ')}`;
}
