import type { EventDialect, PoolingKind } from '../../shared/endpoint-kinds.js';
import { Agent } from 'undici';
import type { HttpPhases } from '../../shared/request-record.js';
import type { Clock } from '../clock.js';
import { timedConnector } from './http-phases.js';
import { ParseQueue } from './parse-queue.js';
import type { StreamResult } from './stream-accumulator.js';
import { isServerClose, StreamRequest } from './stream-request.js';
import type { RequestContext } from './stream-request.js';

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
  /** A pooling request: its answer is one JSON body with one item per input, not a stream. */
  whole?: { kind: PoolingKind; inputs: number };
  /** A stream of another API's events (Messages, Responses): adapted to chat chunks before they are counted. */
  events?: EventDialect;
}

/** The client's view of one request: when it was handed to the HTTP client, when it ended, what came back. */
export interface RequestOutcome {
  id: number;
  requestTag: string;
  sendMs: number;
  endMs: number;
  httpStatus: number | null;
  result: StreamResult;
  /** Several replicas: which one (its index in --url) answered. */
  replica?: number;
  /** Its HTTP phases; absent for a request never sent. */
  http?: HttpPhases;
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

/** Why in-flight requests were ended: the user cancelled, or the server died under them. */
export interface AbortReason {
  message: string;
  kind: 'cancelled' | 'server-died';
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
    connect: timedConnector(options.clock),
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

  const context: RequestContext = {
    clock,
    queue,
    origin,
    basePath,
    baseHeaders,
    dispatcher: (fresh) => (fresh ? freshDispatcher() : agent),
    get freshConnections() {
      return freshConnections;
    },
    learnFreshConnections: () => {
      freshConnections = true;
    },
    noteSocketFailure: (hadResponse) => {
      failureOnSocket = { hadResponse };
      queueMicrotask(() => {
        failureOnSocket = null;
      });
    },
  };

  function send(spec: RequestSpec, signal?: AbortSignal, onEnded?: () => void): Promise<RequestOutcome> {
    // At once, not on a later turn: a closed-loop lane sends its next request the moment the last ended on the
    // wire, and the client's parsing of that response overlaps this one's wait, as a real client's does.
    return new Promise<RequestOutcome>((resolve) => new StreamRequest(context, spec, signal, onEnded, resolve).start());
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
