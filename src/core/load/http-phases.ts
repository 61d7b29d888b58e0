import { subscribe } from 'node:diagnostics_channel';
import { buildConnector } from 'undici';
import type { HttpPhases } from '../../shared/request-record.js';
import type { Clock } from '../clock.js';

// HTTP phases per request: a connector stamps each new socket's connect span; undici's `sendHeaders` diagnostics
// channel says which socket a request's headers were written to (matched by its x-request-id), so the request that
// opened a socket gets its connect span and one on a kept-alive socket is marked reused.

interface ConnectSpan {
  startMs: number;
  endMs: number;
  /** Given to the first request written on the socket; later ones reused it. */
  taken: boolean;
}

const spans = new WeakMap<object, ConnectSpan>();
type HeadersSent = (socket: object) => void;
const waiting = new Map<string, HeadersSent[]>();
let subscribed = false;
const TAG_HEADER = '\r\nx-request-id: ';

function requestTagOf(header: string): string | null {
  const at = header.indexOf(TAG_HEADER);
  if (at < 0) return null;
  const from = at + TAG_HEADER.length;
  const to = header.indexOf('\r\n', from);
  return to < 0 ? null : header.slice(from, to);
}

function onSendHeaders(message: unknown): void {
  const { headers, socket } = message as { headers?: unknown; socket?: object };
  if (typeof headers !== 'string' || !socket) return;
  const tag = requestTagOf(headers);
  const listeners = tag === null ? undefined : waiting.get(tag);
  const listener = listeners?.shift();
  if (listeners?.length === 0 && tag !== null) waiting.delete(tag);
  listener?.(socket);
}

/** A connector (undici's own) that stamps each new socket's connect span, TCP and TLS, on the client's clock. */
export function timedConnector(clock: Clock): buildConnector.connector {
  const inner = buildConnector({});
  return (options, callback) => {
    const startMs = clock.nowMs();
    inner(options, (...args) => {
      const socket = args[1];
      if (socket) spans.set(socket, { startMs, endMs: clock.nowMs(), taken: false });
      callback(...args);
    });
  };
}

/** One request's HTTP phases as they happen: created at dispatch, stamped by the socket and by the response. */
export class PhaseStamps {
  private readonly clock: Clock;
  private readonly tag: string;
  private listener: HeadersSent | null = null;
  phases: HttpPhases = { requestSentMs: null, headersMs: null, firstByteMs: null };

  constructor(clock: Clock, tag: string) {
    this.clock = clock;
    this.tag = tag;
  }

  /** A new attempt went out (a retry starts the phases over); listens for its headers being written. */
  dispatched(): void {
    if (!subscribed) {
      subscribed = true;
      subscribe('undici:client:sendHeaders', onSendHeaders);
    }
    this.forget();
    this.phases = { requestSentMs: null, headersMs: null, firstByteMs: null };
    const listener: HeadersSent = (socket) => {
      this.listener = null;
      this.phases.requestSentMs = this.clock.nowMs();
      const span = spans.get(socket);
      if (span && !span.taken) {
        span.taken = true;
        this.phases.connectStartMs = span.startMs;
        this.phases.connectEndMs = span.endMs;
      }
    };
    this.listener = listener;
    const list = waiting.get(this.tag);
    if (list) list.push(listener);
    else waiting.set(this.tag, [listener]);
  }

  /** The response's status line and headers were read at tMs. */
  headers(tMs: number): void {
    this.phases.headersMs ??= tMs;
  }

  /** A body read arrived at tMs (the first one counts). */
  read(tMs: number): void {
    this.phases.firstByteMs ??= tMs;
  }

  /** Stops listening (the request settled): a request never written leaves nothing behind. */
  forget(): void {
    const listener = this.listener;
    if (!listener) return;
    this.listener = null;
    const list = waiting.get(this.tag);
    if (!list) return;
    const i = list.indexOf(listener);
    if (i >= 0) list.splice(i, 1);
    if (list.length === 0) waiting.delete(this.tag);
  }
}
