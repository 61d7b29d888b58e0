/** One measured request; a line of requests.jsonl. Times are ms after the run's clock origin. */
export interface RequestRecord {
  id: number;
  /** Sent as x-request-id: matches the request in the server's own log (or the simulator's truth log). */
  requestTag: string;
  levelIndex: number;
  /** Round number, or -1 for a warm-up request (discarded from metrics). */
  round: number;
  warmup: boolean;
  /** Open-loop only: when the schedule wanted it sent. */
  scheduledMs?: number;
  sendMs: number;
  /** First chunk carrying non-empty generated text. */
  firstTokenMs: number | null;
  endMs: number | null;
  /** Token-bearing chunks: [timeMs, tokens] in arrival order. */
  chunks: Array<[number, number]>;
  /** Output tokens: server usage.completion_tokens, or chunk count when the server gave none. */
  nOut: number;
  nOutSource: 'server' | 'estimated';
  /** Chunk-level token counts: from continuous usage, or 1 per chunk (estimated). */
  chunkTokensSource: 'server' | 'estimated';
  /** Number of token-bearing chunks counted by the client. */
  clientChunkCount: number;
  nIn: number | null;
  expectedIn: number;
  expectedOut: number;
  finishReason: string | null;
  ok: boolean;
  error?: string;
  /** Short class of the error (http-500, timeout, midstream-error, connection, cancelled ...). */
  errorKind?: string;
  httpStatus?: number;
  /** SSE lines that were not valid JSON events (counted, never fatal). */
  malformedLines: number;
  /** Reasoning streams only: first chunk carrying answer text (TTFO = this - sendMs); null when none came. */
  firstContentMs?: number | null;
  /** Reasoning streams only: output tokens spent reasoning, and the rest (the answer). */
  nReasoning?: number;
  nContent?: number;
  /** From the server's reasoning_tokens, or counted from the reasoning chunks (estimated). */
  nReasoningSource?: 'server' | 'estimated';
  /**
   * When a prompt could not be counted ahead (no exact /tokenize): a multi-turn history, or a prompt file's record at
   * its own length; expectedIn is then the server's own usage.prompt_tokens ('server') or, without it, an estimate
   * ('estimated': turns x (input + output), or the level's input length): not verified.
   */
  expectedInSource?: 'server' | 'estimated';
  /** Workloads other than fixed synthetic prompts: shared-prefix group, conversation and turn, source line. */
  workload?: { group?: number; conversation?: number; turn?: number; sourceIndex?: number };
  /** llama.cpp only: the server's own prompt-processing time (timings.prompt_ms of the last chunk), ms. */
  serverPromptMs?: number;
  /** llama.cpp only: the server's own generation time, first token to last (timings.predicted_ms), ms. */
  serverDecodeMs?: number;
  /** Distributed runs: the rank of the worker that sent it (its times are mapped onto rank 0's clock). */
  worker?: number;
  /** Prompt tokens the server said it served from its prefix cache (its usage or llama.cpp's timings.cache_n). */
  cachedPromptTokens?: number;
  /**
   * Counts in the server's usage that cannot be true, left out of this record (nOut then counts one token per chunk,
   * marked estimated, and no figure is built on it); absent when every count was plausible.
   */
  usageProblems?: UsageProblem[];
}

/** One impossible count in a response's usage: which field, why, the value (null when not finite) and the bound. */
export interface UsageProblem {
  field: 'completion_tokens' | 'prompt_tokens' | 'cached_tokens' | 'reasoning_tokens';
  code:
    | 'not-a-count'
    | 'above-max-tokens'
    | 'below-chunks'
    | 'above-request-size'
    | 'above-prompt-tokens'
    | 'above-completion-tokens';
  value: number | null;
  bound?: number;
}
