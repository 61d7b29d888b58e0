import type { RequestExecutor } from '../../../src/core/load/executor.js';
import type { LevelRunInput } from '../../../src/core/load/level-runner.js';
import type { Prompt } from '../../../src/core/load/prompts.js';
import { FULL_COMPAT } from '../../../src/core/load/request-body.js';

/** A level-runner input on a frozen clock with no events or records kept; the plan, prompts and executor are the test's. */
export function levelRunInput(
  plan: LevelRunInput['plan'],
  prompts: Prompt[],
  executor: RequestExecutor,
  over: Partial<LevelRunInput> = {},
): LevelRunInput {
  return {
    plan,
    levelIndex: 0,
    prompts,
    executor,
    clock: { nowMs: () => 0, originMonoNs: 0n },
    model: 'm',
    api: 'chat',
    compat: FULL_COMPAT,
    ignoreEos: true,
    temperature: 0,
    timeoutMs: 1000,
    seed: 1,
    firstId: 0,
    tagPrefix: 't',
    signal: new AbortController().signal,
    onEvent: () => {},
    onRecords: () => {},
    ...over,
  };
}
