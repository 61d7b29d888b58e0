/** One measured request; a line of requests.jsonl. Times are ms after the run's clock origin. */
/** Why an answer failed its --response-format or --tools ask (the structured-output check counts them by code). */
export const STRUCTURED_PROBLEMS = [
  'not-json',
  'schema',
  'regex',
  'choice',
  'no-tool-call',
  'unexpected-tool-call',
  'unknown-tool',
  'tool-args-not-json',
  'tool-args-schema',
] as const;

export type StructuredProblem = (typeof STRUCTURED_PROBLEMS)[number];

/** An ok answer held to its structured-output ask: valid, or the first problem found and where. */
export interface StructuredVerdict {
  valid: boolean;
  problem?: StructuredProblem;
  /** Where it went wrong, e.g. "/age: must be integer" or the answer's first characters (at most 200). */
  detail?: string;
  /** Tool calls the answer made. */
  toolCalls?: number;
}

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
  /**
   * Time to first token and end-to-end latency, written when the request is recorded (absent in records of earlier
   * versions: read them with requestTtftMs and requestE2eMs, which derive them there).
   */
  ttftMs?: number | null;
  e2eMs?: number | null;
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
  /** --response-format or --tools: whether the answer was what was asked (ok requests only). */
  structured?: StructuredVerdict;
  /** --lora: the adapter the request named (its model field, or llama.cpp's lora id). */
  adapter?: string;
  /** Several --url replicas: the index (0-based, in --url order) of the replica it was sent to. */
  replica?: number;
  /** Distributed runs: the rank of the worker that sent it (its times are mapped onto rank 0's clock). */
  worker?: number;
  /** Prompt tokens the server said it served from its prefix cache (its usage or llama.cpp's timings.cache_n). */
  cachedPromptTokens?: number;
  /**
   * Counts in the server's usage that cannot be true, left out of this record (nOut then counts one token per chunk,
   * marked estimated, and no figure is built on it); absent when every count was plausible.
   */
  usageProblems?: UsageProblem[];
  /** The request's HTTP phases (absent in records of earlier versions and for a request never sent). */
  http?: HttpPhases;
}

/** When each HTTP phase of a request ended, on the run clock; null where it never came. */
export interface HttpPhases {
  /** Only for a request that opened a new connection (TCP, and TLS for https): the connect's start and end. */
  connectStartMs?: number;
  connectEndMs?: number;
  /** Its request headers were written to the socket. */
  requestSentMs: number | null;
  /** The response's status line and headers were read. */
  headersMs: number | null;
  /** The first body byte was read. */
  firstByteMs: number | null;
}

/** A request's HTTP phase durations, ms: each from send, except connect (its own span; 0 on a reused socket). */
export interface HttpPhaseTimes {
  connectMs: number;
  reusedConnection: boolean;
  toHeadersMs: number | null;
  ttfbMs: number | null;
  ttftMs: number | null;
}

/** The HTTP phase durations of a record; null for a record without phases (earlier versions, never sent). */
export function requestHttpTimes(r: RequestRecord): HttpPhaseTimes | null {
  const h = r.http;
  if (!h) return null;
  const opened = h.connectStartMs !== undefined && h.connectEndMs !== undefined;
  return {
    connectMs: opened ? (h.connectEndMs ?? 0) - (h.connectStartMs ?? 0) : 0,
    reusedConnection: !opened,
    toHeadersMs: h.headersMs === null ? null : h.headersMs - r.sendMs,
    ttfbMs: h.firstByteMs === null ? null : h.firstByteMs - r.sendMs,
    ttftMs: requestTtftMs(r),
  };
}

/** One impossible count in a response's usage: which field, why, the value (null when not finite) and the bound. */
export interface UsageProblem {
  field: 'completion_tokens' | 'prompt_tokens' | 'cached_tokens' | 'reasoning_tokens';
  code:
    | 'not-a-count'
    | 'not-a-number'
    | 'above-max-tokens'
    | 'below-chunks'
    | 'above-request-size'
    | 'above-prompt-tokens'
    | 'above-completion-tokens';
  value: number | null;
  bound?: number;
  /** not-a-number: what the server sent instead ('a string', 'a boolean', 'an object'). */
  sentAs?: string;
}

/** TTFT of a record (first token − send): the stored figure, or derived for records written before it was stored. */
export function requestTtftMs(r: RequestRecord): number | null {
  return r.ttftMs !== undefined ? r.ttftMs : recordLatencies(r).ttftMs;
}

/** E2E of a record (end of stream − send): the stored figure, or derived for records written before it was stored. */
export function requestE2eMs(r: RequestRecord): number | null {
  return r.e2eMs !== undefined ? r.e2eMs : recordLatencies(r).e2eMs;
}

/** TTFT and E2E from a record's times: the one place they are computed (at record time, or on reading an old record). */
export function recordLatencies(r: Pick<RequestRecord, 'sendMs' | 'firstTokenMs' | 'endMs'>): {
  ttftMs: number | null;
  e2eMs: number | null;
} {
  return {
    ttftMs: r.firstTokenMs === null ? null : r.firstTokenMs - r.sendMs,
    e2eMs: r.endMs === null ? null : r.endMs - r.sendMs,
  };
}

/** True when the server's count of a usage field was impossible for this request (usageProblems), so left out. */
export function usageRejected(record: RequestRecord, field: UsageProblem['field']): boolean {
  return record.usageProblems?.some((p) => p.field === field) ?? false;
}

/** True when the request's output token count is known: no figure is built on a count the server got impossibly wrong. */
export function outputCounted(record: RequestRecord): boolean {
  return !usageRejected(record, 'completion_tokens');
}

/**
 * TPOT of a record: (E2E − TTFT) / (nOut − 1); null for one output token, for a stream whose whole output came in one
 * chunk (a diffusion block: no decoding was seen) and where the server's output count was impossible.
 */
export function requestTpotMs(r: RequestRecord): number | null {
  const ttft = requestTtftMs(r);
  const e2e = requestE2eMs(r);
  if (!outputCounted(r) || ttft === null || e2e === null || r.nOut <= 1 || r.chunks.length < 2) return null;
  return (e2e - ttft) / (r.nOut - 1);
}
