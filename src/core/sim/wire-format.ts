import type { Mimic } from './startup-log.js';

/** sglang reports EOS as the matched token id; the sim's EOS id. */
export const EOS_TOKEN_ID = 2;

/** Token counts a usage object reports. */
export interface UsageCounts {
  promptTokens: number;
  completionTokens: number;
  /** Reasoning tokens so far; null when the request is not in reasoning mode. */
  reasoningTokens: number | null;
  /** Prompt tokens served from the prefix cache (reported only by a cache-reporting format). */
  cachedTokens: number;
}

/**
 * How an engine writes the OpenAI-compatible fields that differ between engines: the usage object (final usage
 * chunk, non-streaming body, continuous usage) and the fields beside finish_reason. Chunks are built as text for
 * speed (zero-delay mode writes hundreds of MB/s), so each shape returns JSON text.
 */
export interface WireFormat {
  /** Names the format in cache keys. */
  name: string;
  /** Usage of a final usage chunk or a non-streaming body. */
  usage(counts: UsageCounts): string;
  /** Usage carried by every chunk (stream_options.continuous_usage_stats). */
  chunkUsage(counts: UsageCounts): string;
  /** `"finish_reason":...` and its sibling field, in a choice; `reason` null while the stream goes on. */
  finish(reason: 'length' | 'stop' | 'tool_calls' | null): string;
  /** Usage of a completions stream's final usage chunk (SGLang dumps that one without its null fields). */
  completionsStreamUsage(counts: UsageCounts): string;
  /** Chat streams: the finish_reason comes in a chunk of its own, with an empty delta, after the last content. */
  chatFinishChunk: boolean;
  /** Chat streams: the role chunk carries continuous usage too. */
  roleChunkUsage: boolean;
}

const counts = (c: UsageCounts): string =>
  `"prompt_tokens":${c.promptTokens},"total_tokens":${c.promptTokens + c.completionTokens},"completion_tokens":${c.completionTokens}`;

/** vLLM (and the plain OpenAI mimic): reasoning under completion_tokens_details, stop_reason beside finish_reason. */
const VLLM_WIRE: WireFormat = {
  name: 'vllm',
  usage: (c) =>
    `{${counts(c)}${c.reasoningTokens !== null ? `,"completion_tokens_details":{"reasoning_tokens":${c.reasoningTokens}}` : ''}}`,
  // vLLM's per-chunk usage carries the three counts only.
  chunkUsage: (c) => `{${counts(c)}}`,
  finish: (reason) => (reason === null ? '"finish_reason":null' : `"finish_reason":"${reason}","stop_reason":null`),
  completionsStreamUsage: (c) => VLLM_WIRE.usage(c),
  chatFinishChunk: false,
  roleChunkUsage: true,
};

/**
 * SGLang's UsageInfo as pydantic dumps it (python/sglang/srt/entrypoints/openai/protocol.py): every field, so
 * prompt_tokens_details is null without --enable-cache-report and reasoning_tokens sits at the top level (0 when
 * none), in continuous usage too; matched_stop beside finish_reason (the EOS id, or null at the length limit).
 * Its chat stream (serving_chat.py _generate_chat_stream, sse_utils.py build_sse_content): a role chunk and content
 * chunks with finish_reason null and no usage on the role chunk, then one chunk per choice with an empty delta,
 * finish_reason and matched_stop, then the usage chunk (choices []). Its completions stream
 * (serving_completions.py) puts finish_reason on the last text chunk and dumps the usage chunk with exclude_none.
 */
const SGLANG_WIRE: WireFormat = {
  name: 'sglang',
  usage: (c) => `{${counts(c)},"prompt_tokens_details":null,"reasoning_tokens":${c.reasoningTokens ?? 0}}`,
  chunkUsage: (c) => SGLANG_WIRE.usage(c),
  finish: (reason) =>
    reason === null
      ? '"finish_reason":null,"matched_stop":null'
      : `"finish_reason":"${reason}","matched_stop":${reason === 'stop' ? EOS_TOKEN_ID : 'null'}`,
  completionsStreamUsage: (c) => `{${counts(c)},"reasoning_tokens":${c.reasoningTokens ?? 0}}`,
  chatFinishChunk: true,
  roleChunkUsage: false,
};

/**
 * vLLM with --enable-prompt-tokens-details (serving_chat.py): prompt_tokens_details {cached_tokens} in the final usage
 * only, and only when some tokens were cached; per-chunk usage keeps the three counts.
 */
const VLLM_CACHE_WIRE: WireFormat = {
  ...VLLM_WIRE,
  name: 'vllm+cache',
  usage: (c) => {
    const base = VLLM_WIRE.usage(c);
    return c.cachedTokens > 0
      ? `${base.slice(0, -1)},"prompt_tokens_details":{"cached_tokens":${c.cachedTokens}}}`
      : base;
  },
  completionsStreamUsage: (c) => VLLM_CACHE_WIRE.usage(c),
};

/** SGLang with --enable-cache-report: prompt_tokens_details {cached_tokens} in every usage, 0 included. */
const SGLANG_CACHE_WIRE: WireFormat = {
  ...SGLANG_WIRE,
  name: 'sglang+cache',
  usage: (c) =>
    `{${counts(c)},"prompt_tokens_details":{"cached_tokens":${c.cachedTokens}},"reasoning_tokens":${c.reasoningTokens ?? 0}}`,
  chunkUsage: (c) => SGLANG_CACHE_WIRE.usage(c),
  completionsStreamUsage: (c) =>
    `{${counts(c)},"prompt_tokens_details":{"cached_tokens":${c.cachedTokens}},"reasoning_tokens":${c.reasoningTokens ?? 0}}`,
};

/** The wire format a mimic writes; `cacheReport` as the engine's flag that reports cached prompt tokens. */
export function wireFormat(mimic: Mimic, cacheReport = false): WireFormat {
  if (mimic === 'sglang') return cacheReport ? SGLANG_CACHE_WIRE : SGLANG_WIRE;
  return cacheReport ? VLLM_CACHE_WIRE : VLLM_WIRE;
}
