import type { UsageProblem } from '../../shared/request-record.js';
import { isTokenCount, notACount, notANumber } from './usage-bounds.js';

/** What one streamed response amounted to, before it becomes a RequestRecord. */
export interface StreamResult {
  firstTokenMs: number | null;
  chunks: Array<[number, number]>;
  clientChunkCount: number;
  completionTokens: number | null;
  promptTokens: number | null;
  chunkTokensFromServer: boolean;
  finishReason: string | null;
  sawDone: boolean;
  error: string | null;
  errorKind: string | null;
  malformedLines: number;
  /** Reasoning streams only (else null): first chunk carrying answer text (delta.content or completions text). */
  firstContentMs: number | null;
  /** True when any chunk carried delta.reasoning_content or delta.reasoning. */
  sawReasoning: boolean;
  /** Tokens of the reasoning chunks and of the content chunks, by the chunks' token counts. */
  reasoningChunkTokens: number;
  contentChunkTokens: number;
  /** usage.completion_tokens_details.reasoning_tokens (vLLM) or usage.reasoning_tokens (SGLang); null when absent. */
  reasoningTokens: number | null;
  /** llama.cpp's own `timings` (prompt_ms, predicted_ms) from its last chunk; null when the server sent none. */
  serverTimings: { promptMs: number; decodeMs: number } | null;
  /**
   * Prompt tokens the server says it served from its prefix cache: usage.prompt_tokens_details.cached_tokens (vLLM with
   * --enable-prompt-tokens-details and only when not 0, SGLang with --enable-cache-report, llama.cpp) or llama.cpp's
   * timings.cache_n; null when the response said nothing.
   */
  cachedPromptTokens: number | null;
  /** Usage values that were numbers but no count (negative, fractional, beyond 2^53): left null above, named here. */
  usageProblems?: UsageProblem[];
  /**
   * Token-bearing chunks that may share one server step: 1 where reasoning and answer text both came without
   * per-chunk counts (SGLang splits the step that crosses from one to the other over two chunks), else 0.
   */
  chunkSlack?: number;
  /** Only when asked for (multi-turn, structured output): the answer text (content, not reasoning), at most MAX_KEPT_TEXT_CHARS. */
  text?: string;
  /** Only when the text is kept: the tool calls streamed as delta.tool_calls, by index. */
  toolCalls?: StreamToolCall[];
}

/** One tool call put together from its streamed deltas (OpenAI's delta.tool_calls[i].function). */
export interface StreamToolCall {
  name: string;
  arguments: string;
}

/** Most answer text kept per request (a multi-turn history carries it): about a million tokens. */
export const MAX_KEPT_TEXT_CHARS = 4 << 20;

/** What an accumulator keeps beyond timings and counts. */
export interface AccumulatorOptions {
  /** Keep the answer text (multi-turn sends it back as the assistant's message); off on the normal hot path. */
  keepText?: boolean;
}

/** llama.cpp's `timings` object (tools/server result_timings): prompt_ms and predicted_ms, when both are numbers. */
function serverTimings(timings: unknown): { promptMs: number; decodeMs: number } | null {
  if (!timings || typeof timings !== 'object') return null;
  const { prompt_ms: promptMs, predicted_ms: decodeMs } = timings as { prompt_ms?: unknown; predicted_ms?: unknown };
  if (typeof promptMs !== 'number' || typeof decodeMs !== 'number') return null;
  if (!Number.isFinite(promptMs) || !Number.isFinite(decodeMs) || promptMs < 0 || decodeMs < 0) return null;
  return { promptMs, decodeMs };
}

/** llama.cpp's timings.cache_n: prompt tokens its slot reused from the previous prompt. */
function timingsCacheN(timings: unknown): unknown {
  return timings && typeof timings === 'object' ? (timings as { cache_n?: unknown }).cache_n : undefined;
}

interface UsageLike {
  prompt_tokens?: unknown;
  prompt_tokens_details?: { cached_tokens?: unknown } | null;
  completion_tokens?: unknown;
  reasoning_tokens?: unknown;
  completion_tokens_details?: { reasoning_tokens?: unknown } | null;
}

/** The server's reasoning-token count in a usage object: vLLM nests it, SGLang puts it at the top. */
function usageReasoningTokens(usage: UsageLike): unknown {
  const nested = usage.completion_tokens_details;
  if (nested && typeof nested === 'object' && typeof nested.reasoning_tokens === 'number')
    return nested.reasoning_tokens;
  return usage.reasoning_tokens;
}

interface ToolCallDelta {
  index?: unknown;
  function?: { name?: unknown; arguments?: unknown } | null;
}

interface ChoiceLike {
  delta?: { content?: unknown; reasoning_content?: unknown; reasoning?: unknown; tool_calls?: unknown } | null;
  text?: unknown;
  finish_reason?: unknown;
}

const TEXT_FIELDS = ['content', 'reasoning_content', 'reasoning'] as const;

/**
 * Why an event is no chat/completions chunk although it is JSON (choices null without usage, a choice or delta that
 * is no object, text that is a number or an object), or null for a well-formed one. Such a chunk's tokens cannot be
 * timed, so the request cannot be measured.
 */
function malformedChunk(choices: unknown, hasUsage: boolean): string | null {
  if (choices === undefined || Array.isArray(choices)) {
    const choice: unknown = Array.isArray(choices) ? choices[0] : undefined;
    if (choice === undefined) return null;
    if (choice === null || typeof choice !== 'object') return `its choices[0] is ${kindOf(choice)}`;
    const { delta, text } = choice as ChoiceLike;
    if (delta !== undefined && delta !== null && typeof delta !== 'object') return `its delta is ${kindOf(delta)}`;
    for (const field of TEXT_FIELDS) {
      const value = delta?.[field];
      if (value !== undefined && value !== null && typeof value !== 'string')
        return `its delta.${field} is ${kindOf(value)}`;
    }
    if (text !== undefined && text !== null && typeof text !== 'string') return `its text is ${kindOf(text)}`;
    return null;
  }
  // A usage-only chunk may say choices: null; one without usage carries nothing a stream chunk should.
  if (choices === null) return hasUsage ? null : 'its choices is null';
  return `its choices is ${kindOf(choices)}`;
}

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

const MAX_ERROR_CHARS = 500;

function nonEmpty(value: unknown): boolean {
  return typeof value === 'string' && value.length > 0;
}

function errorMessage(error: unknown): string {
  if (typeof error === 'string') return error;
  if (error && typeof error === 'object' && 'message' in error) return String((error as { message: unknown }).message);
  return JSON.stringify(error);
}

/**
 * Turns OpenAI-style stream events (chat or completions) into token timings. Tolerates a role-only first
 * chunk, usage on the last choice chunk or in a separate chunk or not at all, and error objects mid-stream.
 */
export class StreamAccumulator {
  private firstTokenMs: number | null = null;
  private readonly chunks: Array<[number, number]> = [];
  private completionTokens: number | null = null;
  private promptTokens: number | null = null;
  private lastTextCompletionTokens = 0;
  private allChunksCounted = true;
  private lastChunkReasoning = false;
  private mergedCrossing = false;
  private readonly problems = new Map<UsageProblem['field'], UsageProblem>();
  private finishReason: string | null = null;
  private sawDone = false;
  private error: string | null = null;
  private errorKind: string | null = null;
  private malformed = 0;
  private firstContentMs: number | null = null;
  private sawReasoning = false;
  private reasoningChunkTokens = 0;
  private contentChunkTokens = 0;
  private reasoningTokens: number | null = null;
  private serverTimings: { promptMs: number; decodeMs: number } | null = null;
  private cachedPromptTokens: number | null = null;
  private readonly textParts: string[] | null;
  private textChars = 0;
  private readonly toolCalls: StreamToolCall[] = [];

  constructor(options: AccumulatorOptions = {}) {
    this.textParts = options.keepText ? [] : null;
  }

  /** One SSE event's data and the time of the read that carried it. */
  onEvent(data: string, tMs: number): void {
    // [DONE] ends the OpenAI stream: whatever a server (or a proxy's buffer) sends after it is no part of the answer.
    if (this.sawDone) return;
    if (data === '[DONE]') {
      this.sawDone = true;
      return;
    }
    let event: {
      choices?: ChoiceLike[];
      usage?: UsageLike | null;
      error?: unknown;
      object?: unknown;
      message?: unknown;
      timings?: unknown;
    };
    try {
      event = JSON.parse(data) as typeof event;
    } catch {
      this.malformed++;
      return;
    }
    if (event === null || typeof event !== 'object') {
      this.malformed++;
      return;
    }
    if (event.error !== undefined && event.error !== null) {
      this.fail(errorMessage(event.error), 'midstream-error');
      return;
    }
    if (event.object === 'error') {
      this.fail(errorMessage(event.message ?? event), 'midstream-error');
      return;
    }
    // llama.cpp appends its timings to the last chunk (the usage chunk with include_usage, else the finish chunk).
    this.serverTimings = serverTimings(event.timings) ?? this.serverTimings;
    this.cachedPromptTokens = this.count('cached_tokens', timingsCacheN(event.timings)) ?? this.cachedPromptTokens;
    const usage = event.usage;
    const malformed = malformedChunk(event.choices, Boolean(usage && typeof usage === 'object'));
    if (malformed !== null) {
      this.fail(`the server sent a stream chunk that is no chat/completions chunk (${malformed})`, 'malformed-chunk');
      return;
    }
    const choice = Array.isArray(event.choices) ? event.choices[0] : undefined;
    let hasText = false;
    let hasContent = false;
    if (choice) {
      const delta = choice.delta ?? undefined;
      hasContent = delta ? nonEmpty(delta.content) : nonEmpty(choice.text);
      if (hasContent && this.textParts) this.keep((delta ? delta.content : choice.text) as string);
      // A tool call's streamed name and arguments are generated output: the first is the first token.
      if (delta && this.takeToolCalls(delta.tool_calls)) hasContent = true;
      const hasReasoning = delta ? nonEmpty(delta.reasoning_content) || nonEmpty(delta.reasoning) : false;
      if (hasReasoning) this.sawReasoning = true;
      hasText = hasContent || hasReasoning;
      if (typeof choice.finish_reason === 'string') this.finishReason = choice.finish_reason;
    }
    let usageCompletion: number | null = null;
    if (usage && typeof usage === 'object') {
      this.promptTokens = this.count('prompt_tokens', usage.prompt_tokens) ?? this.promptTokens;
      const details = usage.prompt_tokens_details;
      if (details && typeof details === 'object') {
        this.cachedPromptTokens = this.count('cached_tokens', details.cached_tokens) ?? this.cachedPromptTokens;
      }
      usageCompletion = this.count('completion_tokens', usage.completion_tokens);
      if (usageCompletion !== null) this.completionTokens = usageCompletion;
      this.reasoningTokens = this.count('reasoning_tokens', usageReasoningTokens(usage)) ?? this.reasoningTokens;
    }
    if (!hasText) return;
    if (usageCompletion !== null && usageCompletion === this.lastTextCompletionTokens && this.chunks.length > 0) {
      // The server's count did not grow: this text belongs to the last step when it is the answer's start right after
      // reasoning (SGLang splits a step that crosses from reasoning into the answer over two chunks with one total), so
      // it is no new token and no new chunk. Anywhere else a count that stands still is no count of this chunk.
      if (hasContent && this.lastChunkReasoning && !this.mergedCrossing) {
        this.mergedCrossing = true;
        this.lastChunkReasoning = false;
        this.firstContentMs ??= tMs;
        return;
      }
      usageCompletion = null;
    }
    if (this.firstTokenMs === null) this.firstTokenMs = tMs;
    let tokens = 1;
    // Continuous usage: the token count of this chunk is the growth of completion_tokens since the last text chunk.
    if (usageCompletion !== null && usageCompletion > this.lastTextCompletionTokens) {
      tokens = usageCompletion - this.lastTextCompletionTokens;
      this.lastTextCompletionTokens = usageCompletion;
    } else {
      this.allChunksCounted = false;
    }
    this.chunks.push([tMs, tokens]);
    this.lastChunkReasoning = !hasContent;
    // A chunk with answer text counts as content even if it also closes the reasoning.
    if (hasContent) {
      this.firstContentMs ??= tMs;
      this.contentChunkTokens += tokens;
    } else {
      this.reasoningChunkTokens += tokens;
    }
  }

  /**
   * A usage value as a token count: a non-negative safe integer, else null; a number that is none (negative,
   * fractional, 1e308, JSON's 1e400 = Infinity) is kept as the field's problem. Anything else (a string, true) is
   * ignored, as an absent field.
   */
  private count(field: UsageProblem['field'], value: unknown): number | null {
    if (value === undefined || value === null) return null;
    if (typeof value !== 'number') {
      this.problems.set(field, notANumber(field, kindOf(value)));
      return null;
    }
    if (isTokenCount(value)) return value;
    this.problems.set(field, notACount(field, value));
    return null;
  }

  /** Adds one chunk's delta.tool_calls to the calls so far; true when it carried a name or arguments. */
  private takeToolCalls(deltas: unknown): boolean {
    if (!Array.isArray(deltas)) return false;
    let carried = false;
    for (const d of deltas as ToolCallDelta[]) {
      if (!d || typeof d !== 'object') continue;
      const fn = d.function && typeof d.function === 'object' ? d.function : {};
      const name = typeof fn.name === 'string' ? fn.name : '';
      const args = typeof fn.arguments === 'string' ? fn.arguments : '';
      if (name === '' && args === '') continue;
      carried = true;
      if (!this.textParts) continue;
      const index = typeof d.index === 'number' && Number.isInteger(d.index) && d.index >= 0 ? d.index : 0;
      // A hostile index must not grow the list without bound: calls past the kept text's room are dropped.
      if (index > this.toolCalls.length || this.textChars + args.length > MAX_KEPT_TEXT_CHARS) continue;
      const call = (this.toolCalls[index] ??= { name: '', arguments: '' });
      if (name !== '' && call.name !== name) call.name += name;
      call.arguments += args;
      this.textChars += name.length + args.length;
    }
    return carried;
  }

  private keep(piece: string): void {
    const room = MAX_KEPT_TEXT_CHARS - this.textChars;
    if (room <= 0 || !this.textParts) return;
    const part = piece.length > room ? piece.slice(0, room) : piece;
    this.textParts.push(part);
    this.textChars += part.length;
  }

  /** Records a transport or HTTP failure (the first error wins); a server's text is cut to 500 characters. */
  fail(message: string, kind: string): void {
    if (this.error !== null) return;
    // Every failed request keeps its message in the run record: a server must not be able to bloat it.
    this.error = message.length > MAX_ERROR_CHARS ? `${message.slice(0, MAX_ERROR_CHARS)}…` : message;
    this.errorKind = kind;
  }

  /** A pooling answer read whole: its prompt tokens (checked as a count), no output tokens, and it is complete. */
  takeWhole(promptTokens: unknown, _tMs: number): void {
    this.promptTokens = this.count('prompt_tokens', promptTokens);
    this.completionTokens = 0;
    this.finishReason = 'stop';
    this.sawDone = true;
  }

  /** Adds SSE-level malformed lines counted by the parser. */
  addMalformed(count: number): void {
    this.malformed += count;
  }

  result(): StreamResult {
    let error = this.error;
    let errorKind = this.errorKind;
    if (error === null && !this.sawDone && this.finishReason === null) {
      error = 'stream ended before [DONE] or a finish_reason';
      errorKind = 'truncated';
    }
    // Tokens the server counts but never sent as text cannot be timed: no TTFT, no chunk, and no "one whole chunk" either.
    if (error === null && this.chunks.length === 0 && (this.completionTokens ?? 0) > 0) {
      error = `the stream carried no text, yet the server counts ${this.completionTokens} output tokens: none of them can be timed`;
      errorKind = 'no-text';
    }
    const result: StreamResult = {
      firstTokenMs: this.firstTokenMs,
      chunks: this.chunks,
      clientChunkCount: this.chunks.length,
      completionTokens: this.completionTokens,
      promptTokens: this.promptTokens,
      chunkTokensFromServer: this.chunks.length > 0 && this.allChunksCounted,
      finishReason: this.finishReason,
      sawDone: this.sawDone,
      error,
      errorKind,
      malformedLines: this.malformed,
      firstContentMs: this.sawReasoning ? this.firstContentMs : null,
      sawReasoning: this.sawReasoning,
      reasoningChunkTokens: this.reasoningChunkTokens,
      contentChunkTokens: this.contentChunkTokens,
      reasoningTokens: this.reasoningTokens,
      serverTimings: this.serverTimings,
      cachedPromptTokens: this.cachedPromptTokens,
      usageProblems: [...this.problems.values()],
      chunkSlack: this.sawReasoning && this.contentChunkTokens > 0 && !this.allChunksCounted ? 1 : 0,
    };
    if (this.textParts) {
      result.text = this.textParts.join('');
      if (this.toolCalls.length > 0) result.toolCalls = this.toolCalls;
    }
    return result;
  }
}
