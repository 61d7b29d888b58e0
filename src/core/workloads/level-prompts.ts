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
 * token count (/tokenize): they cannot calibrate with real requests without filling the prefix cache.
 */
export async function buildLevelPrompts(input: LevelPromptsInput): Promise<Prompt[]> {
  const { workload } = input;
  if (workload.kind === 'synthetic') {
    return buildPrompts({
      count: input.count,
      targetTokens: input.plan.inputLen,
      runNonce: input.runNonce,
      firstIndex: input.firstIndex,
      uniquePrefix: input.uniquePrefix,
      counter: input.counter,
      verifyEach: input.viaTokenize,
    });
  }
  const flag = workload.kind === 'file' ? '--prompts' : workload.kind === 'trace' ? '--trace' : '--prefix-groups';
  if (!input.viaTokenize) {
    throw new UserError(
      `${flag} needs the server's /tokenize to count each prompt (vLLM, SGLang, llama.cpp and the simulator have it); this server has none: use synthetic prompts`,
    );
  }
  if (workload.kind === 'file') return filePrompts(workload, input);
  if (workload.kind === 'shared-prefix') return sharedPrefixPrompts(workload, input);
  return tracePrompts(workload, input);
}
