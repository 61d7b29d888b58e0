import { describeEngine } from '../../shared/engines.js';
import { LIMITS } from '../../shared/config.js';
import type { BenchConfig, EngineKind } from '../../shared/config.js';
import { UserError } from '../errors.js';
import type { LevelPlan } from './level-plan.js';
import { loadText } from '../../shared/level-load.js';
import { requestTokens } from '../../shared/request-tokens.js';
import { engineFor } from '../servers/engines/index.js';

const n = (v: number): string => v.toLocaleString('en-US');

/** Requests a level sends: its warm-up plus every round. */
export function levelRequests(plan: LevelPlan): number {
  return plan.warmup + plan.rounds * plan.requestsPerRound;
}

/**
 * Refuses, before anything starts, a sweep that cannot work: too many requests in all, a level whose prompts
 * would not fit in memory, or requests longer than the context the server is launched with.
 */
export function checkPlanLimits(config: BenchConfig, plans: LevelPlan[]): void {
  const total = plans.reduce((sum, p) => sum + levelRequests(p), 0) * Math.max(1, config.serverVariants?.length ?? 1);
  if (total > LIMITS.totalRequests.max) {
    throw new UserError(
      `this sweep plans ${n(total)} requests, more than ${n(LIMITS.totalRequests.max)} (${LIMITS.totalRequests.why}): lower --concurrency, --rounds or --requests-per-round`,
    );
  }
  for (const plan of plans) {
    const tokens = levelRequests(plan) * plan.inputLen;
    if (tokens > LIMITS.promptTokensPerLevel.max) {
      throw new UserError(
        `the level at ${plan.rate !== undefined || plan.burst !== undefined ? loadText(plan) : `concurrency ${plan.concurrency}`} would build ${n(levelRequests(plan))} prompts of ${n(plan.inputLen)} tokens (${n(tokens)} tokens, more than ${n(LIMITS.promptTokensPerLevel.max)}: ${LIMITS.promptTokensPerLevel.why}): lower --input-len, --rounds or --requests-per-round`,
      );
    }
  }
  const launched = describeEngine(config.server.engine).launches;
  const maxLens = [config.server.maxModelLen, ...(config.serverVariants ?? []).map((v) => v.maxModelLen)];
  const known = maxLens.filter((v): v is number => typeof v === 'number' && v > 0);
  if (launched && known.length > 0) {
    const ownLengths = config.prompts !== undefined && fileLengths(config);
    const limit = { tokens: Math.min(...known), source: '--max-model-len', engine: config.server.engine };
    const problem = contextProblem(plans, limit, ownLengths);
    if (problem) throw new UserError(problem);
  }
}

/** A prompt file's requests take their prompt or output lengths from the file (--prompt-lengths/--output-lengths file). */
export function fileLengths(lengths: { promptLengths?: 'fixed' | 'file'; outputLengths?: 'fixed' | 'file' }): boolean {
  return lengths.promptLengths === 'file' || lengths.outputLengths === 'file';
}

/** The longest request a server accepts (prompt plus output tokens), and where that figure came from. */
export interface ContextLimit {
  tokens: number;
  source: string;
  /** The engine that set the limit, when known: the refusal's fix is in its words (its module's contextFix). */
  engine?: EngineKind;
  /** llama.cpp: its parallel slots (total_slots in /props), each with `tokens` of context. */
  slots?: number;
}

/** The refusal's closing clause when the engine is not known. */
const CONTEXT_FIX = 'serve the model with a longer context';

/** Prompt plus output tokens of a level's longest request: a multi-turn conversation's last turn carries it all. */
export function longestRequestTokens(plan: LevelPlan): number {
  return requestTokens(plan.inputLen, plan.outputLen, plan.turns ?? 1);
}

/**
 * One line when some level asks for more prompt + output tokens than the server's context holds; else null.
 * `ownLengths`: the requests take their lengths from a prompt file, not the level's (each record is held to the
 * context when its prompt is built), so there is no level length to check.
 */
export function contextProblem(plans: LevelPlan[], limit: ContextLimit | undefined, ownLengths = false): string | null {
  if (!limit || ownLengths) return null;
  // A trace's lengths are its records' own: each is held to the context when its prompt is built.
  const worst = plans
    .filter((p) => !p.schedule)
    .reduce<LevelPlan | undefined>(
      (w, p) => (!w || longestRequestTokens(p) > longestRequestTokens(w) ? p : w),
      undefined,
    );
  if (!worst || longestRequestTokens(worst) <= limit.tokens) return null;
  const fix = (limit.engine && engineFor(limit.engine).contextFix) ?? CONTEXT_FIX;
  const turns = worst.turns ?? 1;
  if (turns > 1) {
    return `--turns ${turns} x (--input-len ${worst.inputLen} + --output-len ${worst.outputLen}) = ${n(longestRequestTokens(worst))} tokens in a conversation's last turn, more than the server's context of ${n(limit.tokens)} (${limit.source}): those turns would fail; lower --turns, --input-len or --output-len, or ${fix}`;
  }
  return `--input-len ${worst.inputLen} + --output-len ${worst.outputLen} = ${n(worst.inputLen + worst.outputLen)} tokens per request, more than the server's context of ${n(limit.tokens)} (${limit.source}): every request would fail; lower --input-len/--output-len, or ${fix}`;
}
