import type { UsageProblem } from '../../shared/request-record.js';

/**
 * Prompt tokens a chat template may add beyond the bytes the request carried (role markers, BOS, a default system
 * prompt). Every other prompt token covers at least one byte of text (byte-level BPE, SentencePiece byte fallback).
 */
export const TEMPLATE_TOKEN_ALLOWANCE = 4096;

/** What a response's usage said, as the accumulator read it: counts only (null when absent or no count). */
export interface ReportedUsage {
  completionTokens: number | null;
  promptTokens: number | null;
  cachedPromptTokens: number | null;
  reasoningTokens: number | null;
  /** Token-bearing chunks the client saw; `chunkSlack` of them may share a server step (reasoning-to-answer split). */
  chunks: number;
  chunkSlack: number;
}

/** What bounds a response's counts: the max_tokens it was sent with, and the request body's size in bytes. */
export interface UsageLimits {
  maxTokens: number;
  /** UTF-8 bytes of the request body; undefined where unknown (the prompt bound is then not checked). */
  bodyBytes?: number;
}

/** A count: a non-negative safe integer (JSON also parses 1e400 as Infinity, and servers send -5 or 2.5). */
export function isTokenCount(value: number): boolean {
  return Number.isSafeInteger(value) && value >= 0;
}

/** Most prompt tokens a request of this many body bytes can have. */
export function maxPromptTokens(bodyBytes: number): number {
  return bodyBytes + TEMPLATE_TOKEN_ALLOWANCE;
}

function problem(
  field: UsageProblem['field'],
  code: UsageProblem['code'],
  value: number,
  bound?: number,
): UsageProblem {
  // JSON has no Infinity or NaN: the code says the value was no count, the value itself is then dropped.
  const p: UsageProblem = { field, code, value: Number.isFinite(value) ? value : null };
  if (bound !== undefined) p.bound = bound;
  return p;
}

/** The problem of a usage value that is no number at all ("8" as a string, true, an object): no count either. */
export function notANumber(field: UsageProblem['field'], sentAs: string): UsageProblem {
  return { field, code: 'not-a-number', value: null, sentAs };
}

/** The problem of a usage value that is a number but no count (negative, fractional, beyond 2^53, Infinity). */
export function notACount(field: UsageProblem['field'], value: number): UsageProblem {
  return problem(field, 'not-a-count', value);
}

function completionProblem(u: ReportedUsage, limits: UsageLimits): UsageProblem | null {
  const n = u.completionTokens;
  if (n === null) return null;
  if (n > limits.maxTokens) return problem('completion_tokens', 'above-max-tokens', n, limits.maxTokens);
  // Each token-bearing chunk carries at least one token (a server may put several in one chunk, never fewer than one).
  const fewest = u.chunks - u.chunkSlack;
  if (n < fewest) return problem('completion_tokens', 'below-chunks', n, fewest);
  return null;
}

function promptProblem(u: ReportedUsage, limits: UsageLimits): UsageProblem | null {
  const n = u.promptTokens;
  if (n === null) return null;
  if (limits.bodyBytes !== undefined && n > maxPromptTokens(limits.bodyBytes))
    return problem('prompt_tokens', 'above-request-size', n, maxPromptTokens(limits.bodyBytes));
  return null;
}

function cachedProblem(u: ReportedUsage, limits: UsageLimits, promptOk: boolean): UsageProblem | null {
  const n = u.cachedPromptTokens;
  if (n === null) return null;
  const prompt = promptOk ? u.promptTokens : null;
  if (prompt !== null && n > prompt) return problem('cached_tokens', 'above-prompt-tokens', n, prompt);
  if (prompt === null && limits.bodyBytes !== undefined && n > maxPromptTokens(limits.bodyBytes))
    return problem('cached_tokens', 'above-request-size', n, maxPromptTokens(limits.bodyBytes));
  return null;
}

function reasoningProblem(u: ReportedUsage, completionOk: boolean): UsageProblem | null {
  const n = u.reasoningTokens;
  if (n === null) return null;
  const total = completionOk ? u.completionTokens : null;
  if (total !== null && n > total) return problem('reasoning_tokens', 'above-completion-tokens', n, total);
  return null;
}

/**
 * The counts of one response that cannot be true, each named by field and reason (values that were no count at all
 * the accumulator named already, see notACount): more output
 * than max_tokens allowed, fewer output tokens than token-bearing chunks, more prompt tokens than the request had
 * bytes (plus a template's allowance), more cached than prompt tokens, more reasoning than output tokens.
 */
export function usageProblems(u: ReportedUsage, limits: UsageLimits): UsageProblem[] {
  const completion = completionProblem(u, limits);
  const prompt = promptProblem(u, limits);
  const cached = cachedProblem(u, limits, prompt === null);
  const reasoning = reasoningProblem(u, completion === null);
  return [completion, prompt, cached, reasoning].filter((p): p is UsageProblem => p !== null);
}
