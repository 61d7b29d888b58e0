import type { RequestRecord } from '../../shared/request-record.js';
import { isCancelled } from './request-metrics.js';

/** The server's commonest error text among failed requests, as quoted in checks, the CLI and the app. */
export interface TopError {
  kind: string;
  message: string;
  count: number;
}

/** Longest server message quoted (a server may send a whole HTML page). */
export const MAX_QUOTED_ERROR = 200;

/** A message cut to one line of at most MAX_QUOTED_ERROR characters. */
function quoteable(message: string): string {
  const line = message.replace(/\s+/g, ' ').trim();
  return line.length > MAX_QUOTED_ERROR ? `${line.slice(0, MAX_QUOTED_ERROR - 1)}…` : line;
}

/**
 * The commonest error message among the failed (not user-cancelled) requests, with how many share it; messages
 * that differ only in numbers (token counts, ids) count as one, quoted as first seen. Null when none failed.
 */
export function commonestError(records: readonly RequestRecord[]): TopError | null {
  const groups = new Map<string, TopError>();
  for (const r of records) {
    if (r.ok || isCancelled(r)) continue;
    const message = quoteable(r.error ?? r.errorKind ?? 'unknown error');
    const key = `${r.errorKind ?? ''}|${message.replace(/\d+/g, '#')}`;
    const group = groups.get(key);
    if (group) group.count++;
    else groups.set(key, { kind: r.errorKind ?? 'unknown', message, count: 1 });
  }
  let top: TopError | null = null;
  for (const g of groups.values()) if (top === null || g.count > top.count) top = g;
  return top;
}

/** True when the error text came from the server (an HTTP error body, an error event in the stream). */
export function fromServer(top: TopError): boolean {
  return top.kind.startsWith('http-') || top.kind === 'midstream-error';
}

/**
 * The words for a check or a summary line: `the server said (6×): "HTTP 400: ..."`, or `commonest error (3×): "..."`
 * for the client's own errors (timeouts, connections). Empty when the message only repeats the kind.
 */
export function serverSaid(top: TopError): string {
  if (top.message === top.kind) return '';
  return `${fromServer(top) ? 'the server said' : 'commonest error'}${top.count > 1 ? ` (${top.count}×)` : ''}: "${top.message}"`;
}

/** True for a message about the model's context window (llama.cpp, vLLM, SGLang and OpenAI wordings). */
export function isContextSizeError(message: string): boolean {
  return /context (size|length|window)|max_model_len|maximum context|context_length|too many tokens/i.test(message);
}

/**
 * The fix for a client error (4xx) that every request got: what the user should change, in one clause. Context-size
 * errors name the lengths asked for and the servers' context flags.
 */
export function clientErrorFix(status: number, message: string, inputLen: number, outputLen: number): string {
  if (isContextSizeError(message)) {
    return (
      `each request needs ${inputLen} + ${outputLen} tokens of context: lower --input-len/--output-len, or raise the ` +
      "server's context (vLLM --max-model-len, SGLang --context-length, llama.cpp -c)"
    );
  }
  if (status === 401 || status === 403) return "pass the server's key with --api-key (or SERVEBENCH_API_KEY)";
  if (status === 404) return 'check --url and --model against the names the server lists at /v1/models';
  return 'change the setting the server names above, then run again';
}
