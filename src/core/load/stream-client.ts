import { Agent } from 'undici';
import type { Dispatcher } from 'undici';
import type { Clock } from '../clock.js';
import { ParseQueue } from './parse-queue.js';
import { SseParser } from './sse-parser.js';
import { StreamAccumulator } from './stream-accumulator.js';
import type { StreamResult } from './stream-accumulator.js';

/** One request to send: the body is serialised ahead of time so sending costs nothing extra. */
export interface RequestSpec {
  id: number;
  /** '/v1/chat/completions' or '/v1/completions' (path under the base URL). */
  path: string;
  body: string;
  timeoutMs: number;
  /** Sent as x-request-id so a server's own log (or the simulator's truth log) can be matched. */
  requestTag: string;
}

/** The client's view of one request: when it was handed to the HTTP client, when it ended, what came back. */
export interface RequestOutcome {
  id: number;
  requestTag: string;
  sendMs: number;
  endMs: number;
  httpStatus: number | null;
  result: StreamResult;
}

export interface StreamClientOptions {
  baseUrl: string;
  clock: Clock;
  apiKey?: string;
  /** Upper bound on sockets to the server. */
  connections?: number;
}

/** A streaming HTTP client that timestamps every network read before parsing it. */
export interface StreamClient {
  send(spec: RequestSpec, signal?: AbortSignal): Promise<RequestOutcome>;
  close(): Promise<void>;
}

const MAX_ERROR_BODY = 64 * 1024;

/** Why in-flight requests were ended: the user cancelled, or the server died under them. */
export interface AbortReason {
  message: string;
  kind: 'cancelled' | 'server-died';
}

function abortReasonOf(signal: AbortSignal | undefined): AbortReason {
  const reason = signal?.reason as Partial<AbortReason> | undefined;
  return reason && typeof reason.message === 'string' && (reason.kind === 'cancelled' || reason.kind === 'server-died')
    ? { message: reason.message, kind: reason.kind }
    : { message: 'cancelled', kind: 'cancelled' };
}

function httpErrorMessage(status: number, body: string): string {
  let message = body.trim().slice(0, 300);
  try {
    const parsed = JSON.parse(body) as { error?: { message?: string } | string; message?: string; detail?: unknown };
    const error = parsed.error;
    message =
      (typeof error === 'string' ? error : error?.message) ??
      parsed.message ??
      (parsed.detail !== undefined ? JSON.stringify(parsed.detail) : message);
  } catch {
    // Not JSON: keep the text.
  }
  return `HTTP ${status}${message ? `: ${message}` : ''}`;
}

function transportErrorKind(error: Error): string {
  const code = (error as { code?: string }).code ?? '';
  if (code === 'ECONNREFUSED') return 'connection-refused';
  if (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET') return 'connection-reset';
  if (code.includes('TIMEOUT')) return 'timeout';
  return 'connection';
}

/** Creates a streaming client on one undici Agent (keep-alive, reconnects when the server closes). */
export function createStreamClient(options: StreamClientOptions): StreamClient {
  const url = new URL(options.baseUrl);
  const origin = url.origin;
  const basePath = url.pathname.replace(/\/+$/, '');
  const agent = new Agent({
    connections: options.connections ?? null,
    pipelining: 1,
    keepAliveTimeout: 30_000,
    headersTimeout: 0,
    bodyTimeout: 0,
  });
  const clock = options.clock;
  const queue = new ParseQueue();
  const baseHeaders: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'text/event-stream',
  };
  if (options.apiKey) baseHeaders.authorization = `Bearer ${options.apiKey}`;

  function send(spec: RequestSpec, signal?: AbortSignal): Promise<RequestOutcome> {
    return new Promise<RequestOutcome>((resolve) => {
      const acc = new StreamAccumulator();
      const parser = new SseParser((data, tMs) => acc.onEvent(data, tMs));
      let status: number | null = null;
      let errorBody = '';
      let controller: Dispatcher.DispatchController | null = null;
      let settled = false;
      let timer: NodeJS.Timeout | undefined = undefined;
      let sendMs = 0;

      const finish = (tMs: number): void => {
        if (settled) return;
        settled = true;
        if (timer) clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        if (status === 200) parser.end(tMs);
        acc.addMalformed(parser.unknownLines);
        resolve({
          id: spec.id,
          requestTag: spec.requestTag,
          sendMs,
          endMs: tMs,
          httpStatus: status,
          result: acc.result(),
        });
      };
      const abortWith = (message: string, kind: string): void => {
        const tMs = clock.nowMs();
        acc.fail(message, kind);
        controller?.abort(new Error(message));
        // Settle after the reads already queued for this stream are parsed, so none is lost or lands late.
        queue.push(() => finish(tMs));
      };
      const onAbort = (): void => {
        const reason = abortReasonOf(signal);
        abortWith(reason.message, reason.kind);
      };

      const handler: Dispatcher.DispatchHandler = {
        onRequestStart(ctrl) {
          controller = ctrl;
          if (settled) ctrl.abort(new Error('cancelled'));
        },
        onResponseStart(_ctrl, statusCode) {
          status = statusCode;
        },
        onResponseData(_ctrl, chunk) {
          // Timestamp at the read; parse later, so other streams' reads are stamped without waiting for it.
          const tMs = clock.nowMs();
          if (status === 200) queue.push(() => parser.push(chunk, tMs));
          else if (errorBody.length < MAX_ERROR_BODY) errorBody += chunk.toString('utf8');
        },
        onResponseEnd() {
          const tMs = clock.nowMs();
          if (status !== 200 && status !== null) {
            acc.fail(httpErrorMessage(status, errorBody), `http-${status}`);
          }
          queue.push(() => finish(tMs));
        },
        onResponseError(_ctrl, error) {
          const tMs = clock.nowMs();
          queue.push(() => {
            acc.fail(error.message || String(error), transportErrorKind(error));
            finish(tMs);
          });
        },
      };

      if (signal?.aborted) {
        sendMs = clock.nowMs();
        const reason = abortReasonOf(signal);
        acc.fail(reason.message, reason.kind);
        finish(sendMs);
        return;
      }
      signal?.addEventListener('abort', onAbort, { once: true });
      timer = setTimeout(() => abortWith(`timed out after ${spec.timeoutMs} ms`, 'timeout'), spec.timeoutMs);
      sendMs = clock.nowMs();
      agent.dispatch(
        {
          origin,
          path: basePath + spec.path,
          method: 'POST',
          headers: { ...baseHeaders, 'x-request-id': spec.requestTag },
          body: spec.body,
        },
        handler,
      );
    });
  }

  return {
    send,
    close: () => agent.close(),
  };
}
