import type { LevelPlan } from '../load/level-plan.js';
import type { TokenCounter } from '../load/prompts.js';
import type { MessagesCounter } from '../load/conversations.js';
import type { Workload } from './workload.js';

/** What a level's prompts are built from and with. */
export interface LevelPromptsInput {
  workload: Workload;
  plan: LevelPlan;
  /** Warm-up plus every round. */
  count: number;
  /** Only these places of the level (0 = its first prompt), in this order: a distributed worker's share. */
  positions?: readonly number[];
  runNonce: number;
  /** Global index of the level's first prompt (synthetic prompts are unique across the run). */
  firstIndex: number;
  /**
   * The level's first prompt-file record: counted from 0 in each server configuration, so every configuration of a
   * server sweep replays the same records; absent: firstIndex.
   */
  firstRecord?: number;
  uniquePrefix: boolean;
  counter: TokenCounter;
  /** The server counts exactly (/tokenize); false: only usage.prompt_tokens after the fact. */
  viaTokenize: boolean;
  /** Without an exact count: the server's /tokenize counts prompt text, so --api completions would be exact. */
  completionsExact?: boolean;
  /** Without an exact count: what /tokenize answered instead of a count (a web page from a gateway), if it answered. */
  tokenizeAnswer?: string;
  /** Counts chat messages (system prompts, message lists); null when the server cannot. */
  countMessages: MessagesCounter | null;
  api: 'chat' | 'completions';
  /** The server's context (prompt + output tokens), when known: a longer request is refused up front. */
  contextTokens?: number;
  /** How many prompts to count with the server at once. */
  parallel?: number;
  /** A cancel (or the server's death) stops the building: the level is dropped, not measured. */
  signal?: AbortSignal;
  /** Told the prompts built so far as they are counted (progress of a long build). */
  onBuilt?: (built: number) => void;
}

/**
 * Runs `make` for each of the level's `count` indices (or its `positions`), `parallel` (default 16) at once, results in
 * that order.
 * Once the level's signal fires no index starts (each may ask the server), and one whose count the signal cut fails
 * quietly: the list comes back with holes, for a caller that drops it.
 */
export async function mapParallel<T>(
  level: Pick<LevelPromptsInput, 'count' | 'positions' | 'parallel' | 'signal' | 'onBuilt'>,
  make: (i: number) => Promise<T>,
): Promise<T[]> {
  const { signal, positions } = level;
  const count = positions?.length ?? level.count;
  const parallel = level.parallel ?? 16;
  const out = new Array<T>(count);
  let next = 0;
  let built = 0;
  const worker = async (): Promise<void> => {
    while (next < count && !signal?.aborted) {
      const i = next++;
      try {
        out[i] = await make(positions ? (positions[i] as number) : i);
        level.onBuilt?.(++built);
      } catch (error) {
        if (!signal?.aborted) throw error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(parallel, count) }, worker));
  return out;
}

/** One line when a request asks more than the server's context holds; null otherwise. */
export function contextLine(
  where: string,
  inTokens: number,
  outTokens: number,
  context: number | undefined,
): string | null {
  if (context === undefined || inTokens + outTokens <= context) return null;
  return `${where} has ${inTokens} prompt + ${outTokens} output tokens, more than the server's context of ${context}: it would fail`;
}
