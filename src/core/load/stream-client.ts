import { Agent } from 'undici';
import type { Dispatcher } from 'undici';
import type { Clock } from '../clock.js';
import { badAnswerLine, isRedirect, redirectLine } from '../http-answers.js';
import { bodyDecoderFor } from './body-decoder.js';
import type { BodyDecoder, DecodeResult } from './body-decoder.js';
import { ParseQueue } from './parse-queue.js';
import {
  checkTimeouts,
  defaultFirstByteTimeoutMs,
  defaultIdleTimeoutMs,
  describeNonStream,
  looksLikeSse,
  streamModeOf,
} from './response-guard.js';
import type { RequestLimits } from './response-guard.js';
import { DEFAULT_MAX_LINE_CHARS, SseParser } from './sse-parser.js';
import { StreamAccumulator } from './stream-accumulator.js';
import type { StreamResult } from './stream-accumulator.js';

/** One request to send: the body is serialised ahead of time so sending costs nothing extra. */
export interface RequestSpec {
  id: number;
  /** '/v1/chat/completions' or '/v1/completions' (path under the base URL). */
  path: string;
  body: string;
  timeoutMs: number;
  /** ms from send to the first response byte; default all of timeoutMs (a queued server may say nothing). */
  firstByteTimeoutMs?: number;
  /** Longest silence between reads once bytes flow; default half of timeoutMs, at least 30 s. */
  idleTimeoutMs?: number;
  /** Sent as x-request-id so a server's own log (or the simulator's truth log) can be matched. */
  requestTag: string;
  /** Keep the answer text in the result (multi-turn: the next turn sends it back). */
  keepText?: boolean;
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
  /**
   * Sends one request now (sendMs is read as it is handed to undici) and resolves with what came back, once its reads
   * are parsed; `onEnded` is told first, as soon as the response ended on the wire or the request failed.
   */
  send(spec: RequestSpec, signal?: AbortSignal, onEnded?: () => void): Promise<RequestOutcome>;
  close(): Promise<void>;
  /** True once the client learned that the server closes its sockets after responses (then one per request). */
  readonly freshConnections: boolean;
}

/** Most of an error or non-stream body kept (and read): the rest is dropped with the connection. */
const MAX_ERROR_BODY = 64 * 1024;
/** Reads waiting to be parsed for one request before its socket is paused (a fast server cannot flood memory). */
const PAUSE_QUEUED_BYTES = 4 << 20;
const RESUME_QUEUED_BYTES = 1 << 20;

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

function httpErrorMessage(status: number, body: string, truncated: boolean): string {
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
  const more = truncated ? ' (body over 64 KiB, cut)' : '';
  return `HTTP ${status}${message ? `: ${message}` : ''}${more}`;
}

function errorCode(error: Error): string {
  return (error as { code?: string }).code ?? '';
}

function transportErrorKind(error: Error): string {
  const code = errorCode(error);
  if (code === 'ECONNREFUSED') return 'connection-refused';
  if (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET' || code === 'EPIPE') return 'connection-reset';
  if (code.includes('TIMEOUT')) return 'timeout';
  return 'connection';
}

/** The server closed the socket (FIN or RST), as opposed to this client closing or aborting it. */
function isServerClose(error: Error | undefined): boolean {
  const code = error ? errorCode(error) : '';
  return code === 'UND_ERR_SOCKET' || code === 'ECONNRESET' || code === 'EPIPE';
}

function headerValue(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
  for (const key of Object.keys(headers)) {
    if (key.toLowerCase() === name) {
      const v = headers[key];
      return Array.isArray(v) ? v.join(', ') : v;
    }
  }
  return undefined;
}

/**
 * Creates a streaming client on one undici Agent. Keep-alive by default; a server seen closing its sockets after
 * responses (llama.cpp announces keep-alive and then closes) gets a fresh connection per request from then on,
 * so no request is written onto a socket the server is closing.
 */
export function createStreamClient(options: StreamClientOptions): StreamClient {
  const url = new URL(options.baseUrl);
  const origin = url.origin;
  const basePath = url.pathname.replace(/\/+$/, '');
  const agentOptions: Agent.Options = {
    connections: options.connections ?? null,
    pipelining: 1,
    // Below the 5 s idle limit of uvicorn (vLLM, SGLang) and Node: this client, not the server, drops idle sockets.
    keepAliveTimeout: 4_000,
    headersTimeout: 0,
    bodyTimeout: 0,
  };
  const agent = new Agent(agentOptions);
  // Once the server is known to close after responses, requests go through an agent that never holds an idle
  // socket (each request closes its own), so none can be written onto a socket the server is closing.
  let freshAgent: Agent | null = null;
  const freshDispatcher = (): Agent => (freshAgent ??= new Agent(agentOptions));
  const clock = options.clock;
  const queue = new ParseQueue();
  const baseHeaders: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'text/event-stream',
    // A proxy that compresses by default leaves a stream alone when asked; one that does not is decoded (or named).
    'accept-encoding': 'identity',
  };
  if (options.apiKey) baseHeaders.authorization = `Bearer ${options.apiKey}`;
  let freshConnections = false;
  let closing = false;
  // Set synchronously by a failing request just before undici reports the socket's end (same call stack).
  let failureOnSocket: { hadResponse: boolean } | null = null;
  agent.on('disconnect', (_origin, _targets, error) => {
    if (closing || !isServerClose(error)) return;
    // A reset in the middle of a response is that request's failure, not a habit of the server.
    if (failureOnSocket?.hadResponse) return;
    freshConnections = true;
  });

  function send(spec: RequestSpec, signal?: AbortSignal, onEnded?: () => void): Promise<RequestOutcome> {
    return new Promise<RequestOutcome>((resolve) => {
      const acc = new StreamAccumulator({ keepText: spec.keepText });
      const parser = new SseParser((data, tMs) => acc.onEvent(data, tMs), { maxLineChars: DEFAULT_MAX_LINE_CHARS });
      const limits: RequestLimits = {
        timeoutMs: spec.timeoutMs,
        firstByteTimeoutMs: spec.firstByteTimeoutMs ?? defaultFirstByteTimeoutMs(spec.timeoutMs),
        idleTimeoutMs: spec.idleTimeoutMs ?? defaultIdleTimeoutMs(spec.timeoutMs),
      };
      const derived = { firstByte: spec.firstByteTimeoutMs === undefined, idle: spec.idleTimeoutMs === undefined };
      let status: number | null = null;
      let contentType: string | undefined;
      let location: string | undefined;
      // How the body is read: SSE, sniffing the first bytes, or kept as text (error or non-stream body).
      let mode: 'sse' | 'sniff' | 'text' = 'text';
      let sniffed: Array<[Buffer, number]> = [];
      let body = '';
      let bodyCut = false;
      let controller: Dispatcher.DispatchController | null = null;
      let settled = false;
      let ending = false;
      let timer: NodeJS.Timeout | undefined = undefined;
      let sendMs = 0;
      let lastReadMs: number | null = null;
      let queuedBytes = 0;
      let attempt = 0;
      let usedFreshConnection = false;
      // The lane's slot is free once the response is over on the wire: it need not wait for the parsing.
      let endedTold = false;
      const tellEnded = (): void => {
        if (endedTold) return;
        endedTold = true;
        if (onEnded) queue.afterBacklog(onEnded);
      };
      let decoder: BodyDecoder | null = null;

      const finish = (tMs: number): void => {
        if (settled) return;
        settled = true;
        tellEnded();
        if (timer) clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        if (mode === 'sse' && status === 200) {
          parser.end(tMs);
          checkOverflow();
        }
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
      const abortWith = (message: string, kind: string, tMs = clock.nowMs()): void => {
        if (ending) return;
        ending = true;
        acc.fail(message, kind);
        controller?.abort(new Error(message));
        tellEnded();
        // Settle after the reads already queued for this stream are parsed, so none is lost or lands late.
        queue.push(() => finish(tMs));
      };
      const onAbort = (): void => {
        const reason = abortReasonOf(signal);
        abortWith(reason.message, reason.kind);
      };
      const checkOverflow = (): void => {
        if (!parser.overflow || ending) return;
        const what =
          parser.overflow === 'line'
            ? `a line of over ${DEFAULT_MAX_LINE_CHARS >> 20} MiB without a newline`
            : 'an event of over 4 MiB of data lines';
        abortWith(
          `the server sent ${what}: no OpenAI-compatible stream does that; the connection was dropped`,
          parser.overflow === 'line' ? 'line-too-long' : 'event-too-long',
        );
      };
      // One timer, woken lazily: reads only move the idle deadline later, so they never touch it.
      let wakeAtMs = Infinity;
      const arm = (waitMs: number): void => {
        if (timer) clearTimeout(timer);
        wakeAtMs = clock.nowMs() + waitMs;
        timer = setTimeout(watchdog, Math.max(1, Math.ceil(waitMs)));
      };
      const watchdog = (): void => {
        timer = undefined;
        if (settled || ending) return;
        const verdict = checkTimeouts(limits, sendMs, lastReadMs, clock.nowMs(), derived);
        if ('waitMs' in verdict) arm(verdict.waitMs);
        else abortWith(verdict.message, verdict.kind);
      };
      const parseLater = (read: Buffer, tMs: number): void => {
        // A read is a view of the socket's whole read buffer: a small one is copied, so its queue slot holds its own bytes.
        const chunk = read.length * 4 < read.buffer.byteLength ? Buffer.from(read) : read;
        queuedBytes += chunk.length;
        if (queuedBytes > PAUSE_QUEUED_BYTES && controller && !controller.paused) controller.pause();
        queue.push(() => {
          queuedBytes -= chunk.length;
          if (controller?.paused && queuedBytes < RESUME_QUEUED_BYTES && !ending) controller.resume();
          if (ending && parser.overflow) return;
          parser.push(chunk, tMs);
          checkOverflow();
        }, chunk.length);
      };
      const keepText = (chunk: Buffer): void => {
        if (body.length < MAX_ERROR_BODY) body += chunk.toString('utf8', 0, Math.min(chunk.length, MAX_ERROR_BODY));
        if (body.length >= MAX_ERROR_BODY) {
          bodyCut = true;
          body = body.slice(0, MAX_ERROR_BODY);
          // An endless body must not hold the request until its time-out: judge what came and drop the rest.
          failFromText(clock.nowMs());
        }
      };
      // ended: the whole body came, so the socket stays usable; otherwise the rest is dropped with it.
      const failFromText = (tMs: number, ended = false): void => {
        if (ending || status === null) return;
        const [message, kind] =
          status === 200
            ? [describeNonStream(contentType, body), 'not-event-stream']
            : isRedirect(status)
              ? [redirectLine(status, location, origin + basePath + spec.path, spec.path), `http-${status}`]
              : [httpErrorMessage(status, body, bodyCut), `http-${status}`];
        if (!ended) {
          abortWith(message, kind, tMs);
          return;
        }
        ending = true;
        acc.fail(message, kind);
      };

      // One read's body bytes (decoded when the body is compressed), stamped with the network read's time.
      const takeRead = (chunk: Buffer, tMs: number): void => {
        if (mode === 'sse') {
          parseLater(chunk, tMs);
          return;
        }
        if (mode === 'sniff') {
          sniffed.push([chunk, tMs]);
          const head = Buffer.concat(sniffed.map((s) => s[0])).toString('utf8', 0, 64);
          const verdict = looksLikeSse(head);
          if (verdict === null && head.length < 64) return;
          const held = sniffed;
          sniffed = [];
          mode = verdict ? 'sse' : 'text';
          for (const [c, t] of held) {
            if (mode === 'sse') parseLater(c, t);
            else keepText(c);
          }
          return;
        }
        keepText(chunk);
      };
      const decoded = (result: DecodeResult, tMs: number): void => {
        if ('error' in result) {
          abortWith(result.error, result.kind, tMs);
          return;
        }
        for (const piece of result.pieces) if (!ending) takeRead(piece, tMs);
      };

      const handler: Dispatcher.DispatchHandler = {
        onRequestStart(ctrl) {
          controller = ctrl;
          if (settled || ending) ctrl.abort(new Error('cancelled'));
        },
        onResponseStart(_ctrl, statusCode, headers) {
          status = statusCode;
          lastReadMs = clock.nowMs();
          // From the first byte on the idle limit rules; it may fall before the wake set for the first byte.
          if (lastReadMs + limits.idleTimeoutMs < wakeAtMs && !ending) arm(limits.idleTimeoutMs);
          contentType = headerValue(headers as Record<string, string | string[] | undefined>, 'content-type');
          location = headerValue(headers as Record<string, string | string[] | undefined>, 'location');
          if (statusCode === 200) {
            const m = streamModeOf(contentType);
            mode = m === 'sse' ? 'sse' : m === null ? 'sniff' : 'text';
          }
          const coding = bodyDecoderFor(
            headerValue(headers as Record<string, string | string[] | undefined>, 'content-encoding'),
          );
          if (!('refused' in coding)) decoder = coding.decoder;
          else if (statusCode === 200) abortWith(coding.refused, 'content-encoding', lastReadMs);
          else
            abortWith(`HTTP ${statusCode} (its body in an encoding servebench does not decode)`, `http-${statusCode}`);
          // A response that says `connection: close` needs nothing: undici never writes another request onto
          // that socket. Only a close the server did not announce (seen in 'disconnect') teaches fresh sockets.
        },
        onResponseData(_ctrl, chunk) {
          // Timestamp at the read; parse later, so other streams' reads are stamped without waiting for it.
          const tMs = clock.nowMs();
          lastReadMs = tMs;
          if (ending) return;
          if (decoder) decoded(decoder.push(chunk), tMs);
          else takeRead(chunk, tMs);
        },
        onResponseEnd() {
          const tMs = clock.nowMs();
          if (decoder && !ending) decoded(decoder.end(), tMs);
          if (mode === 'sniff') {
            // Too few bytes to tell: judge them as text.
            mode = 'text';
            for (const [c] of sniffed) keepText(c);
            sniffed = [];
          }
          if (mode === 'text') failFromText(tMs, true);
          tellEnded();
          queue.push(() => finish(tMs));
        },
        onResponseError(_ctrl, error) {
          const tMs = clock.nowMs();
          failureOnSocket = { hadResponse: status !== null };
          queueMicrotask(() => {
            failureOnSocket = null;
          });
          if (ending) return;
          // The server closed a kept-alive socket under a request it never answered: it closes sockets after
          // responses and never read this one (the race of reusing a closing socket). Send it once more, on a new
          // socket. A request that already went on a new socket is never retried: its failure is the server's.
          if (
            status === null &&
            lastReadMs === null &&
            attempt === 0 &&
            !usedFreshConnection &&
            isServerClose(error) &&
            !signal?.aborted
          ) {
            freshConnections = true;
            attempt++;
            dispatch();
            return;
          }
          tellEnded();
          queue.push(() => {
            const bad = badAnswerLine(errorCode(error));
            acc.fail(bad ?? (error.message || String(error)), bad ? 'bad-answer' : transportErrorKind(error));
            finish(tMs);
          });
        },
      };

      const dispatch = (): void => {
        controller = null;
        usedFreshConnection = freshConnections;
        sendMs = clock.nowMs();
        (usedFreshConnection ? freshDispatcher() : agent).dispatch(
          {
            origin,
            path: basePath + spec.path,
            method: 'POST',
            headers: { ...baseHeaders, 'x-request-id': spec.requestTag },
            body: spec.body,
            reset: usedFreshConnection,
          },
          handler,
        );
      };

      const start = (): void => {
        if (signal?.aborted) {
          sendMs = clock.nowMs();
          const reason = abortReasonOf(signal);
          acc.fail(reason.message, reason.kind);
          finish(sendMs);
          return;
        }
        signal?.addEventListener('abort', onAbort, { once: true });
        dispatch();
        arm(Math.min(limits.timeoutMs, limits.firstByteTimeoutMs));
      };
      // At once, not on a later turn: a closed-loop lane sends its next request the moment the last ended on the
      // wire, and the client's parsing of that response overlaps this one's wait, as a real client's does.
      start();
    });
  }

  return {
    send,
    close: async () => {
      closing = true;
      await Promise.all([agent.close(), freshAgent?.close()]);
    },
    get freshConnections() {
      return freshConnections;
    },
  };
}
