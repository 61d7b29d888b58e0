import type { Dispatcher } from 'undici';
import { readPoolingAnswer } from './pooling-answer.js';
import { eventAdapter, type Adapted } from './event-adapters.js';
import type { Clock } from '../clock.js';
import { badAnswerLine, isRedirect, redirectLine } from '../http-answers.js';
import { bodyDecoderFor } from './body-decoder.js';
import { PhaseStamps } from './http-phases.js';
import type { BodyDecoder, DecodeResult } from './body-decoder.js';
import type { ParseQueue } from './parse-queue.js';
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
import type { AbortReason, RequestOutcome, RequestSpec } from './stream-client.js';

/** Most of an error or non-stream body kept (and read): the rest is dropped with the connection. */
const MAX_ERROR_BODY = 64 * 1024;
/** Most bytes of one pooling answer (embeddings of a batch as JSON floats): beyond it the batch is too big to hold. */
const MAX_WHOLE_BODY = 64 << 20;
/** Reads waiting to be parsed for one request before its socket is paused (a fast server cannot flood memory). */
const PAUSE_QUEUED_BYTES = 4 << 20;
const RESUME_QUEUED_BYTES = 1 << 20;

/** What one request needs of its client: where to send, the shared parse queue, and what the client learned. */
export interface RequestContext {
  clock: Clock;
  queue: ParseQueue;
  origin: string;
  basePath: string;
  baseHeaders: Record<string, string>;
  /** The keep-alive agent, or (fresh) one that never holds an idle socket. */
  dispatcher(fresh: boolean): Dispatcher;
  readonly freshConnections: boolean;
  /** The server was seen closing a kept-alive socket: later requests go on fresh sockets. */
  learnFreshConnections(): void;
  /** A request failed on its socket (said before undici reports the socket's end, in the same call stack). */
  noteSocketFailure(hadResponse: boolean): void;
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
export function isServerClose(error: Error | undefined): boolean {
  const code = error ? errorCode(error) : '';
  return code === 'UND_ERR_SOCKET' || code === 'ECONNRESET' || code === 'EPIPE';
}

type Headers = Record<string, string | string[] | undefined>;

function headerValue(headers: Headers, name: string): string | undefined {
  for (const key of Object.keys(headers)) {
    if (key.toLowerCase() === name) {
      const v = headers[key];
      return Array.isArray(v) ? v.join(', ') : v;
    }
  }
  return undefined;
}

function overflowFailure(overflow: 'line' | 'event'): [message: string, kind: string] {
  const what =
    overflow === 'line'
      ? `a line of over ${DEFAULT_MAX_LINE_CHARS >> 20} MiB without a newline`
      : 'an event of over 4 MiB of data lines';
  return [
    `the server sent ${what}: no OpenAI-compatible stream does that; the connection was dropped`,
    overflow === 'line' ? 'line-too-long' : 'event-too-long',
  ];
}

/**
 * One request on the wire, from dispatch to its outcome: it timestamps every read as it arrives, queues the parsing,
 * and judges what is not a stream (an error, a redirect, a plain body) from the text it kept.
 */
export class StreamRequest {
  private readonly ctx: RequestContext;
  private readonly spec: RequestSpec;
  private readonly signal: AbortSignal | undefined;
  private readonly onEnded: (() => void) | undefined;
  private readonly resolve: (outcome: RequestOutcome) => void;
  private readonly acc: StreamAccumulator;
  private readonly parser: SseParser;
  private readonly limits: RequestLimits;
  private readonly derived: { firstByte: boolean; idle: boolean };
  private status: number | null = null;
  private contentType: string | undefined;
  private location: string | undefined;
  // How the body is read: SSE, sniffing the first bytes, or kept as text (error or non-stream body).
  private mode: 'sse' | 'sniff' | 'text' | 'whole' = 'text';
  // A pooling answer's reads, kept whole until it ends (it is one JSON body).
  private wholeParts: Buffer[] = [];
  private wholeBytes = 0;
  private sniffed: Array<[Buffer, number]> = [];
  private body = '';
  private bodyCut = false;
  private controller: Dispatcher.DispatchController | null = null;
  private settled = false;
  private ending = false;
  private timer: NodeJS.Timeout | undefined = undefined;
  // One timer, woken lazily: reads only move the idle deadline later, so they never touch it.
  private wakeAtMs = Infinity;
  private sendMs = 0;
  private lastReadMs: number | null = null;
  private queuedBytes = 0;
  private attempt = 0;
  private usedFreshConnection = false;
  // The lane's slot is free once the response is over on the wire: it need not wait for the parsing.
  private endedTold = false;
  private decoder: BodyDecoder | null = null;
  private phases: PhaseStamps | null = null;
  private readonly handler: Dispatcher.DispatchHandler = {
    onRequestStart: (ctrl) => this.onRequestStart(ctrl),
    onResponseStart: (_ctrl, statusCode, headers) => this.onResponseStart(statusCode, headers as Headers),
    onResponseData: (_ctrl, chunk) => this.onResponseData(chunk),
    onResponseEnd: () => this.onResponseEnd(),
    onResponseError: (_ctrl, error) => this.onResponseError(error),
  };

  constructor(
    ctx: RequestContext,
    spec: RequestSpec,
    signal: AbortSignal | undefined,
    onEnded: (() => void) | undefined,
    resolve: (outcome: RequestOutcome) => void,
  ) {
    this.ctx = ctx;
    this.spec = spec;
    this.signal = signal;
    this.onEnded = onEnded;
    this.resolve = resolve;
    this.acc = new StreamAccumulator({ keepText: spec.keepText });
    const adapter = spec.events ? eventAdapter(spec.events) : null;
    const feed = adapter
      ? (data: string, tMs: number) => this.feedAdapted(adapter.adapt(data), tMs)
      : (data: string, tMs: number) => this.acc.onEvent(data, tMs);
    this.parser = new SseParser(feed, { maxLineChars: DEFAULT_MAX_LINE_CHARS });
    this.limits = {
      timeoutMs: spec.timeoutMs,
      firstByteTimeoutMs: spec.firstByteTimeoutMs ?? defaultFirstByteTimeoutMs(spec.timeoutMs),
      idleTimeoutMs: spec.idleTimeoutMs ?? defaultIdleTimeoutMs(spec.timeoutMs),
    };
    this.derived = { firstByte: spec.firstByteTimeoutMs === undefined, idle: spec.idleTimeoutMs === undefined };
  }

  /** Sends the request now (an already aborted signal ends it at once, unsent). */
  start(): void {
    const signal = this.signal;
    if (signal?.aborted) {
      this.sendMs = this.ctx.clock.nowMs();
      const reason = abortReasonOf(signal);
      this.acc.fail(reason.message, reason.kind);
      this.finish(this.sendMs);
      return;
    }
    signal?.addEventListener('abort', this.onAbort, { once: true });
    this.dispatch();
    this.arm(Math.min(this.limits.timeoutMs, this.limits.firstByteTimeoutMs));
  }

  private dispatch(): void {
    this.controller = null;
    this.usedFreshConnection = this.ctx.freshConnections;
    this.sendMs = this.ctx.clock.nowMs();
    this.phases ??= new PhaseStamps(this.ctx.clock, this.spec.requestTag);
    this.phases.dispatched();
    this.ctx.dispatcher(this.usedFreshConnection).dispatch(
      {
        origin: this.ctx.origin,
        path: this.ctx.basePath + this.spec.path,
        method: 'POST',
        headers: { ...this.ctx.baseHeaders, 'x-request-id': this.spec.requestTag },
        body: this.spec.body,
        reset: this.usedFreshConnection,
      },
      this.handler,
    );
  }

  private tellEnded(): void {
    if (this.endedTold) return;
    this.endedTold = true;
    if (this.onEnded) this.ctx.queue.afterBacklog(this.onEnded);
  }

  private finish(tMs: number): void {
    if (this.settled) return;
    this.settled = true;
    this.tellEnded();
    if (this.timer) clearTimeout(this.timer);
    this.signal?.removeEventListener('abort', this.onAbort);
    if (this.mode === 'sse' && this.status === 200) {
      this.parser.end(tMs);
      this.checkOverflow();
    }
    this.acc.addMalformed(this.parser.unknownLines);
    this.phases?.forget();
    this.resolve({
      id: this.spec.id,
      requestTag: this.spec.requestTag,
      sendMs: this.sendMs,
      endMs: tMs,
      httpStatus: this.status,
      result: this.acc.result(),
      ...(this.phases && { http: this.phases.phases }),
    });
  }

  private abortWith(message: string, kind: string, tMs = this.ctx.clock.nowMs()): void {
    if (this.ending) return;
    this.ending = true;
    this.acc.fail(message, kind);
    this.controller?.abort(new Error(message));
    this.tellEnded();
    // Settle after the reads already queued for this stream are parsed, so none is lost or lands late.
    this.ctx.queue.push(() => this.finish(tMs));
  }

  private readonly onAbort = (): void => {
    const reason = abortReasonOf(this.signal);
    this.abortWith(reason.message, reason.kind);
  };

  private checkOverflow(): void {
    if (!this.parser.overflow || this.ending) return;
    this.abortWith(...overflowFailure(this.parser.overflow));
  }

  private arm(waitMs: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.wakeAtMs = this.ctx.clock.nowMs() + waitMs;
    this.timer = setTimeout(this.watchdog, Math.max(1, Math.ceil(waitMs)));
  }

  private readonly watchdog = (): void => {
    this.timer = undefined;
    if (this.settled || this.ending) return;
    const verdict = checkTimeouts(this.limits, this.sendMs, this.lastReadMs, this.ctx.clock.nowMs(), this.derived);
    if ('waitMs' in verdict) this.arm(verdict.waitMs);
    else this.abortWith(verdict.message, verdict.kind);
  };

  private parseLater(read: Buffer, tMs: number): void {
    // A read is a view of the socket's whole read buffer: a small one is copied, so its queue slot holds its own bytes.
    const chunk = read.length * 4 < read.buffer.byteLength ? Buffer.from(read) : read;
    this.queuedBytes += chunk.length;
    const controller = this.controller;
    if (this.queuedBytes > PAUSE_QUEUED_BYTES && controller && !controller.paused) controller.pause();
    this.ctx.queue.push(() => {
      this.queuedBytes -= chunk.length;
      if (this.controller?.paused && this.queuedBytes < RESUME_QUEUED_BYTES && !this.ending) this.controller.resume();
      if (this.ending && this.parser.overflow) return;
      this.parser.push(chunk, tMs);
      this.checkOverflow();
    }, chunk.length);
  }

  private keepText(chunk: Buffer): void {
    if (this.body.length < MAX_ERROR_BODY) {
      this.body += chunk.toString('utf8', 0, Math.min(chunk.length, MAX_ERROR_BODY));
    }
    if (this.body.length >= MAX_ERROR_BODY) {
      this.bodyCut = true;
      this.body = this.body.slice(0, MAX_ERROR_BODY);
      // An endless body must not hold the request until its time-out: judge what came and drop the rest.
      this.failFromText(this.ctx.clock.nowMs());
    }
  }

  // ended: the whole body came, so the socket stays usable; otherwise the rest is dropped with it.
  private failFromText(tMs: number, ended = false): void {
    const status = this.status;
    if (this.ending || status === null) return;
    const { origin, basePath } = this.ctx;
    const path = this.spec.path;
    const [message, kind] =
      status === 200
        ? [describeNonStream(this.contentType, this.body), 'not-event-stream']
        : isRedirect(status)
          ? [redirectLine(status, this.location, origin + basePath + path, path), `http-${status}`]
          : [httpErrorMessage(status, this.body, this.bodyCut), `http-${status}`];
    if (!ended) {
      this.abortWith(message, kind, tMs);
      return;
    }
    this.ending = true;
    this.acc.fail(message, kind);
  }

  // One read's body bytes (decoded when the body is compressed), stamped with the network read's time.
  private takeRead(chunk: Buffer, tMs: number): void {
    if (this.mode === 'whole') {
      this.keepWhole(chunk, tMs);
      return;
    }
    if (this.mode === 'sse') {
      this.parseLater(chunk, tMs);
      return;
    }
    if (this.mode === 'sniff') {
      this.sniff(chunk, tMs);
      return;
    }
    this.keepText(chunk);
  }

  // Another API's event, as chat chunks; a wrong or error event ends the request with its one line.
  private feedAdapted(adapted: Adapted, tMs: number): void {
    if ('fail' in adapted) {
      this.abortWith(adapted.fail, adapted.kind, tMs);
      return;
    }
    for (const data of adapted.data) this.acc.onEvent(data, tMs);
  }

  private keepWhole(chunk: Buffer, tMs: number): void {
    this.wholeBytes += chunk.length;
    if (this.wholeBytes > MAX_WHOLE_BODY) {
      this.wholeParts = [];
      this.abortWith(`the ${this.spec.whole?.kind} answer is over 64 MiB: lower --batch-size`, 'answer-too-long', tMs);
      return;
    }
    this.wholeParts.push(Buffer.from(chunk));
  }

  // A pooling answer, parsed once it is whole: its items counted against the inputs, its prompt tokens taken.
  private readWhole(tMs: number): void {
    const whole = this.spec.whole;
    if (!whole || this.ending) return;
    const answer = readPoolingAnswer(whole.kind, Buffer.concat(this.wholeParts).toString('utf8'), whole.inputs);
    this.wholeParts = [];
    if (answer.ok) this.acc.takeWhole(answer.promptTokens, tMs);
    else this.acc.fail(answer.error, answer.kind);
  }

  // Holds the first reads of a body of no stated type until they show whether it is SSE.
  private sniff(chunk: Buffer, tMs: number): void {
    this.sniffed.push([chunk, tMs]);
    const head = Buffer.concat(this.sniffed.map((s) => s[0])).toString('utf8', 0, 64);
    const verdict = looksLikeSse(head);
    if (verdict === null && head.length < 64) return;
    const held = this.sniffed;
    this.sniffed = [];
    this.mode = verdict ? 'sse' : 'text';
    for (const [c, t] of held) {
      if (this.mode === 'sse') this.parseLater(c, t);
      else this.keepText(c);
    }
  }

  private decoded(result: DecodeResult, tMs: number): void {
    if ('error' in result) {
      this.abortWith(result.error, result.kind, tMs);
      return;
    }
    for (const piece of result.pieces) if (!this.ending) this.takeRead(piece, tMs);
  }

  private onRequestStart(ctrl: Dispatcher.DispatchController): void {
    this.controller = ctrl;
    if (this.settled || this.ending) ctrl.abort(new Error('cancelled'));
  }

  private onResponseStart(statusCode: number, headers: Headers): void {
    this.status = statusCode;
    const lastReadMs = this.ctx.clock.nowMs();
    this.lastReadMs = lastReadMs;
    this.phases?.headers(lastReadMs);
    // From the first byte on the idle limit rules; it may fall before the wake set for the first byte.
    if (lastReadMs + this.limits.idleTimeoutMs < this.wakeAtMs && !this.ending) this.arm(this.limits.idleTimeoutMs);
    this.contentType = headerValue(headers, 'content-type');
    this.location = headerValue(headers, 'location');
    if (statusCode === 200 && this.spec.whole) {
      this.mode = 'whole';
    } else if (statusCode === 200) {
      const m = streamModeOf(this.contentType);
      this.mode = m === 'sse' ? 'sse' : m === null ? 'sniff' : 'text';
    }
    const coding = bodyDecoderFor(headerValue(headers, 'content-encoding'));
    if (!('refused' in coding)) this.decoder = coding.decoder;
    else if (statusCode === 200) this.abortWith(coding.refused, 'content-encoding', lastReadMs);
    else
      this.abortWith(`HTTP ${statusCode} (its body in an encoding servebench does not decode)`, `http-${statusCode}`);
    // A response that says `connection: close` needs nothing: undici never writes another request onto
    // that socket. Only a close the server did not announce (seen in 'disconnect') teaches fresh sockets.
  }

  private onResponseData(chunk: Buffer): void {
    // Timestamp at the read; parse later, so other streams' reads are stamped without waiting for it.
    const tMs = this.ctx.clock.nowMs();
    this.lastReadMs = tMs;
    this.phases?.read(tMs);
    if (this.ending) return;
    if (this.decoder) this.decoded(this.decoder.push(chunk), tMs);
    else this.takeRead(chunk, tMs);
  }

  private onResponseEnd(): void {
    const tMs = this.ctx.clock.nowMs();
    if (this.decoder && !this.ending) this.decoded(this.decoder.end(), tMs);
    if (this.mode === 'sniff') {
      // Too few bytes to tell: judge them as text.
      this.mode = 'text';
      for (const [c] of this.sniffed) this.keepText(c);
      this.sniffed = [];
    }
    if (this.mode === 'text') this.failFromText(tMs, true);
    this.tellEnded();
    if (this.mode === 'whole') this.ctx.queue.push(() => this.readWhole(tMs));
    this.ctx.queue.push(() => this.finish(tMs));
  }

  private onResponseError(error: Error): void {
    const tMs = this.ctx.clock.nowMs();
    this.ctx.noteSocketFailure(this.status !== null);
    if (this.ending) return;
    if (this.mayRetry(error)) {
      this.ctx.learnFreshConnections();
      this.attempt++;
      this.dispatch();
      return;
    }
    this.tellEnded();
    this.ctx.queue.push(() => {
      const bad = badAnswerLine(errorCode(error));
      this.acc.fail(bad ?? (error.message || String(error)), bad ? 'bad-answer' : transportErrorKind(error));
      this.finish(tMs);
    });
  }

  // The server closed a kept-alive socket under a request it never answered: it closes sockets after responses and
  // never read this one (the race of reusing a closing socket). Send it once more, on a new socket. A request that
  // already went on a new socket is never retried: its failure is the server's.
  private mayRetry(error: Error): boolean {
    return (
      this.status === null &&
      this.lastReadMs === null &&
      this.attempt === 0 &&
      !this.usedFreshConnection &&
      isServerClose(error) &&
      !this.signal?.aborted
    );
  }
}
