import { createServer, connect } from 'node:net';
import type { AddressInfo, Server, Socket } from 'node:net';

/**
 * How the proxy treats the server's bytes (the client's always pass at once):
 * - 'pass': as they come (a well-behaved proxy, for comparison);
 * - 'hold-all': each response held whole and written in one write when it ends (nginx with proxy_buffering on);
 * - 'pass-first': passed until the first chunk frame carrying a token, the rest held to the end of the response;
 * - 'flush-every': held and written in one write every `ms` from the response's first byte (a proxy flushing its buffer
 *   on a timer).
 * The HTTP chunked framing is left as the server sent it, one frame per event, so a released buffer reaches the
 * client as many frames in one read.
 */
export type ProxyMode =
  { kind: 'pass' } | { kind: 'hold-all' } | { kind: 'pass-first' } | { kind: 'flush-every'; ms: number };

export interface BufferingProxy {
  url: string;
  /** Responses that ended (framed by content-length or the last chunk). */
  responses: number;
  /** Writes that released bytes the proxy had held back. */
  releases: number;
  close(): Promise<void>;
}

/** A token-bearing SSE event: completions text or chat content, non-empty (the role-only chunk is not one). */
const TOKEN_FRAME = /"(?:text|content|reasoning_content)":"[^"]/;

type Part = { bytes: Buffer; token: boolean; end: boolean };

/**
 * Splits the server's side of one connection into parts: response heads, chunk frames (size line, data and CRLF),
 * and each response's end. Responses follow one another on a kept-alive socket; a body with neither length nor
 * chunking runs to the close.
 */
class ResponseFramer {
  private buf: Buffer = Buffer.alloc(0);
  private state: 'head' | 'length' | 'size' | 'data' | 'trailer' | 'raw' = 'head';
  private remaining = 0;
  private pending: Buffer[] = [];

  /** Feeds bytes; returns the parts now complete. */
  push(data: Buffer): Part[] {
    this.buf = this.buf.length > 0 ? Buffer.concat([this.buf, data]) : data;
    const parts: Part[] = [];
    for (;;) {
      const part = this.next();
      if (part === null) break;
      parts.push(part);
    }
    return parts;
  }

  private take(n: number): Buffer {
    const out = this.buf.subarray(0, n);
    this.buf = this.buf.subarray(n);
    return out;
  }

  private next(): Part | null {
    switch (this.state) {
      case 'head': {
        const at = this.buf.indexOf('\r\n\r\n');
        if (at < 0) return null;
        const head = this.take(at + 4);
        const text = head.toString('latin1').toLowerCase();
        const length = /\r\ncontent-length:\s*(\d+)/.exec(text);
        if (/\r\ntransfer-encoding:[^\r]*chunked/.test(text)) this.state = 'size';
        else if (length) {
          this.remaining = Number(length[1]);
          this.state = 'length';
          if (this.remaining === 0) {
            this.state = 'head';
            return { bytes: head, token: false, end: true };
          }
        } else this.state = 'raw';
        return { bytes: head, token: false, end: false };
      }
      case 'length': {
        if (this.buf.length === 0) return null;
        const body = this.take(Math.min(this.remaining, this.buf.length));
        this.remaining -= body.length;
        const end = this.remaining === 0;
        if (end) this.state = 'head';
        return { bytes: body, token: false, end };
      }
      case 'size': {
        const at = this.buf.indexOf('\r\n');
        if (at < 0) return null;
        const line = this.take(at + 2);
        this.remaining = parseInt(line.toString('latin1'), 16);
        this.pending = [line];
        this.state = this.remaining === 0 ? 'trailer' : 'data';
        return this.next();
      }
      case 'data': {
        if (this.buf.length < this.remaining + 2) return null;
        const data = this.take(this.remaining + 2);
        const frame = Buffer.concat([...this.pending, data]);
        this.pending = [];
        this.state = 'size';
        return { bytes: frame, token: TOKEN_FRAME.test(data.toString('utf8')), end: false };
      }
      case 'trailer': {
        const at = this.buf.indexOf('\r\n');
        if (at < 0) return null;
        const line = this.take(at + 2);
        this.pending.push(line);
        if (line.length > 2) return this.next();
        const last = Buffer.concat(this.pending);
        this.pending = [];
        this.state = 'head';
        return { bytes: last, token: false, end: true };
      }
      case 'raw': {
        if (this.buf.length === 0) return null;
        return { bytes: this.take(this.buf.length), token: false, end: false };
      }
    }
  }
}

/** Starts a TCP proxy on 127.0.0.1 in front of `upstream` (an http://host:port URL). */
export async function startBufferingProxy(upstream: string, mode: ProxyMode): Promise<BufferingProxy> {
  const target = new URL(upstream);
  const stats = { responses: 0, releases: 0 };
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const origin = connect({ host: target.hostname, port: Number(target.port) });
    sockets.add(client);
    sockets.add(origin);
    client.setNoDelay(true);
    origin.setNoDelay(true);
    const framer = new ResponseFramer();
    let held: Buffer[] = [];
    // pass-first: whether this response's first token already went through.
    let firstPassed = false;
    const release = (): void => {
      if (held.length === 0 || client.destroyed) return;
      client.write(Buffer.concat(held));
      held = [];
      stats.releases++;
    };
    // flush-every: a timer from the response's first byte to its end (the phase of a kept-alive socket's timer
    // would decide how much the first flush carries).
    let timer: NodeJS.Timeout | null = null;
    const stopTimer = (): void => {
      if (timer) clearInterval(timer);
      timer = null;
    };
    const onPart = (part: Part): void => {
      const passing = mode.kind === 'pass' || (mode.kind === 'pass-first' && !firstPassed);
      if (passing) client.write(part.bytes);
      else held.push(part.bytes);
      if (mode.kind === 'flush-every' && timer === null && !part.end) timer = setInterval(release, mode.ms);
      if (part.token) firstPassed = true;
      if (part.end) {
        stats.responses++;
        firstPassed = false;
        stopTimer();
        release();
      }
    };
    client.on('data', (data: Buffer) => origin.write(data));
    origin.on('data', (data: Buffer) => {
      if (mode.kind === 'pass') {
        client.write(data);
        // Count the responses all the same.
        for (const part of framer.push(data)) if (part.end) stats.responses++;
        return;
      }
      for (const part of framer.push(data)) onPart(part);
    });
    const closeBoth = (): void => {
      stopTimer();
      release();
      client.end();
      origin.end();
    };
    origin.on('end', closeBoth);
    client.on('end', closeBoth);
    const drop = (): void => {
      stopTimer();
      client.destroy();
      origin.destroy();
    };
    origin.on('error', drop);
    client.on('error', drop);
    client.on('close', () => {
      sockets.delete(client);
      drop();
    });
    origin.on('close', () => sockets.delete(origin));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    get responses() {
      return stats.responses;
    },
    get releases() {
      return stats.releases;
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
