import { recordLatencies } from '../../shared/request-record.js';
import type { RequestRecord, UsageProblem } from '../../shared/request-record.js';
import { reasoningFields } from './reasoning-fields.js';
import type { ScheduledOutcome } from './scheduler.js';
import type { StreamResult } from './stream-accumulator.js';
import { usageProblems } from './usage-bounds.js';

/** Context that the outcome itself does not carry. */
export interface RecordContext {
  levelIndex: number;
  round: number;
  expectedIn: number;
  expectedOut: number;
  /** UTF-8 bytes of the request body: no prompt can have more tokens than that (plus a chat template's). */
  bodyBytes?: number;
  /** The workload's place for this request (shared-prefix group, conversation turn, source line). */
  meta?: RequestRecord['workload'];
}

/** The stream's counts with every impossible one set to null, and the problems that named them. */
function boundedCounts(r: StreamResult, ctx: RecordContext): { result: StreamResult; problems: UsageProblem[] } {
  const crossChecked = usageProblems(
    {
      completionTokens: r.completionTokens,
      promptTokens: r.promptTokens,
      cachedPromptTokens: r.cachedPromptTokens,
      reasoningTokens: r.reasoningTokens,
      chunks: r.chunks.length,
      chunkSlack: r.chunkSlack ?? 0,
    },
    { maxTokens: ctx.expectedOut, ...(ctx.bodyBytes !== undefined ? { bodyBytes: ctx.bodyBytes } : {}) },
  );
  const problems = [...(r.usageProblems ?? []), ...crossChecked];
  if (problems.length === 0) return { result: r, problems };
  const bad = new Set(problems.map((p) => p.field));
  const completionBad = bad.has('completion_tokens');
  return {
    problems,
    result: {
      ...r,
      completionTokens: completionBad ? null : r.completionTokens,
      promptTokens: bad.has('prompt_tokens') ? null : r.promptTokens,
      cachedPromptTokens: bad.has('cached_tokens') ? null : r.cachedPromptTokens,
      reasoningTokens: bad.has('reasoning_tokens') || completionBad ? null : r.reasoningTokens,
      // Per-chunk counts come from the same usage: with its total impossible, a chunk is only known to hold a token.
      ...(completionBad && {
        chunks: r.chunks.map(([t]) => [t, 1] as [number, number]),
        chunkTokensFromServer: false,
        reasoningChunkTokens: 0,
        contentChunkTokens: 0,
      }),
    },
  };
}

/**
 * Turns what the client saw into a request record: server token counts first, chunk counts only as a fallback.
 * Counts that cannot be true (see usageProblems) are left out and listed in usageProblems.
 */
export function outcomeToRecord(outcome: ScheduledOutcome, ctx: RecordContext): RequestRecord {
  const { result: r, problems } = boundedCounts(outcome.result, ctx);
  const ok = outcome.httpStatus === 200 && r.error === null;
  const estimatedOut = r.chunks.reduce((sum, c) => sum + c[1], 0);
  const record: RequestRecord = {
    id: outcome.id,
    requestTag: outcome.requestTag,
    levelIndex: ctx.levelIndex,
    round: ctx.round,
    warmup: ctx.round < 0,
    sendMs: outcome.sendMs,
    firstTokenMs: r.firstTokenMs,
    endMs: outcome.endMs,
    ...recordLatencies({ sendMs: outcome.sendMs, firstTokenMs: r.firstTokenMs, endMs: outcome.endMs }),
    chunks: r.chunks,
    nOut: r.completionTokens ?? estimatedOut,
    nOutSource: r.completionTokens !== null ? 'server' : 'estimated',
    chunkTokensSource: r.chunkTokensFromServer ? 'server' : 'estimated',
    clientChunkCount: r.clientChunkCount,
    nIn: r.promptTokens,
    expectedIn: ctx.expectedIn,
    expectedOut: ctx.expectedOut,
    finishReason: r.finishReason,
    ok,
    malformedLines: r.malformedLines,
  };
  if (r.sawReasoning) Object.assign(record, reasoningFields(r, record.nOut));
  if (r.serverTimings) {
    record.serverPromptMs = r.serverTimings.promptMs;
    record.serverDecodeMs = r.serverTimings.decodeMs;
  }
  if (r.cachedPromptTokens !== null) record.cachedPromptTokens = r.cachedPromptTokens;
  if (problems.length > 0) record.usageProblems = problems;
  if (ctx.meta && Object.keys(ctx.meta).length > 0) record.workload = { ...ctx.meta };
  if (outcome.replica !== undefined) record.replica = outcome.replica;
  if (outcome.scheduledMs !== undefined) record.scheduledMs = outcome.scheduledMs;
  if (outcome.httpStatus !== null) record.httpStatus = outcome.httpStatus;
  if (outcome.http) record.http = outcome.http;
  if (!ok) {
    record.error = r.error ?? `HTTP ${outcome.httpStatus ?? 'no response'}`;
    record.errorKind = r.errorKind ?? (outcome.httpStatus !== null ? `http-${outcome.httpStatus}` : 'connection');
  }
  return record;
}
