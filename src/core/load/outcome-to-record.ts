import type { RequestRecord } from '../../shared/request-record.js';
import { reasoningFields } from './reasoning-fields.js';
import type { ScheduledOutcome } from './scheduler.js';

/** Context that the outcome itself does not carry. */
export interface RecordContext {
  levelIndex: number;
  round: number;
  expectedIn: number;
  expectedOut: number;
  /** The workload's place for this request (shared-prefix group, conversation turn, source line). */
  meta?: RequestRecord['workload'];
}

/** Turns what the client saw into a request record: server token counts first, chunk counts only as a fallback. */
export function outcomeToRecord(outcome: ScheduledOutcome, ctx: RecordContext): RequestRecord {
  const r = outcome.result;
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
  if (ctx.meta && Object.keys(ctx.meta).length > 0) record.workload = { ...ctx.meta };
  if (outcome.scheduledMs !== undefined) record.scheduledMs = outcome.scheduledMs;
  if (outcome.httpStatus !== null) record.httpStatus = outcome.httpStatus;
  if (!ok) {
    record.error = r.error ?? `HTTP ${outcome.httpStatus ?? 'no response'}`;
    record.errorKind = r.errorKind ?? (outcome.httpStatus !== null ? `http-${outcome.httpStatus}` : 'connection');
  }
  return record;
}
