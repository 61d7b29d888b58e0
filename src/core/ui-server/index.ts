import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingMessage, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import type { RawData, WebSocket } from 'ws';
import type { ContractEvent } from '../../shared/contract.js';
import type { ServebenchService } from '../api.js';
import { UserError } from '../errors.js';
import { dispatchCall } from './dispatch.js';
import { EventFanout } from './event-fanout.js';
import { serveStatic } from './static-files.js';

/** Options of the `servebench ui` server. */
export interface UiServerOptions {
  service: ServebenchService;
  /** 0 = a free port. */
  port: number;
  /** Loopback only: the server can start engines, so nothing off this machine may reach it. */
  host?: string;
  /** The built renderer (out/renderer). */
  staticDir: string;
  /** The token a client must present on /rpc; default a random one per start (tests pass their own). */
  token?: string;
  /** Told about errors the server survived (a bad client, a failed accept), one line each. */
  onError?: (line: string) => void;
}

/** A running UI server. */
export interface UiServer {
  /** The address to open, with the token: `http://127.0.0.1:PORT/?token=...` (as Jupyter prints it). */
  url: string;
  port: number;
  host: string;
  /** The per-start token every /rpc connection must carry (`/rpc?token=...`). */
  token: string;
  /** Number of connected WebSocket clients. */
  clients(): number;
  close(): Promise<void>;
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1']);
/** Largest message a client may send; a bigger one closes that client with 1009, nothing else. */
export const MAX_MESSAGE_BYTES = 4 * 1024 * 1024;
/** Close code for a frame type we do not take (binary). */
const UNSUPPORTED_DATA = 1003;

/** Constant-time comparison of a presented token with the expected one (digests make the lengths equal). */
export function tokenMatches(presented: string | null | undefined, expected: string): boolean {
  if (typeof presented !== 'string') return false;
  const a = createHash('sha256').update(presented).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

/** The service's replay of the run in progress, taken synchronously (events pushed later reach the fan-out). */
function replayOf(service: ServebenchService): ContractEvent[] {
  const replay: ContractEvent[] = [];
  service.subscribe((event) => replay.push(event), { replay: true })();
  return replay;
}

/** Ends an upgrade request with a plain HTTP status; the socket is not ours to keep. */
function refuseUpgrade(socket: Duplex, status: number, reason: string): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const body = `${reason}\n`;
  socket.end(
    `HTTP/1.1 ${status} ${status === 403 ? 'Forbidden' : status === 404 ? 'Not Found' : 'Bad Request'}\r\n` +
      `Connection: close\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}

/** Why an upgrade to the socket is refused (status and line), or null when it may go on. */
function upgradeRefusal(
  req: IncomingMessage,
  hostOk: (req: IncomingMessage) => boolean,
  originOk: (req: IncomingMessage) => boolean,
  token: string,
): [status: number, reason: string] | null {
  let url: URL;
  try {
    url = new URL(req.url ?? '/', 'http://localhost');
  } catch {
    return [400, 'bad request'];
  }
  if (url.pathname !== '/rpc') return [404, 'not found'];
  if (!hostOk(req)) return [403, 'forbidden host'];
  if (!originOk(req)) return [403, 'forbidden origin'];
  if (!tokenMatches(url.searchParams.get('token'), token)) {
    return [403, 'forbidden: open the URL with ?token= that `servebench ui` printed'];
  }
  return null;
}

/** Sends one answer as JSON text; one that cannot be serialised is answered with why. */
function sendJson(fanout: EventFanout, ws: WebSocket, message: unknown): void {
  let text: string;
  try {
    text = JSON.stringify(message);
  } catch (error) {
    text = JSON.stringify({
      id: (message as { id?: unknown })?.id ?? null,
      error: `unsendable answer: ${(error as Error).message}`,
    });
  }
  fanout.sendTo(ws, text);
}

/** One client message: a call `{id, method, args}` answered on the same socket, or why it is not one. */
function onMessage(
  service: ServebenchService,
  send: (ws: WebSocket, message: unknown) => void,
  ws: WebSocket,
  data: RawData,
  isBinary: boolean,
): void {
  if (isBinary) {
    send(ws, { id: null, error: 'bad message: binary frames are not accepted; send JSON text' });
    ws.close(UNSUPPORTED_DATA, 'binary frames are not accepted');
    return;
  }
  let message: unknown;
  try {
    message = JSON.parse(String(data));
  } catch {
    send(ws, { id: null, error: 'bad message: not JSON' });
    return;
  }
  const m = (message && typeof message === 'object' ? message : {}) as {
    id?: unknown;
    method?: unknown;
    args?: unknown;
  };
  const id = typeof m.id === 'number' || typeof m.id === 'string' ? m.id : null;
  if (!message || typeof message !== 'object' || Array.isArray(message)) {
    send(ws, { id, error: 'bad message: expected {id, method, args}' });
    return;
  }
  dispatchCall(service, m.method, m.args).then(
    (outcome) => send(ws, outcome.ok ? { id, result: outcome.result } : { id, error: outcome.error }),
    (error: unknown) => send(ws, { id, error: `bad message: ${(error as Error)?.message ?? String(error)}` }),
  );
}

/** DNS rebinding and cross-site pages: only our own host names, and only our own origin for the socket. */
function hostChecks(port: () => number): {
  hostOk: (req: IncomingMessage) => boolean;
  originOk: (req: IncomingMessage) => boolean;
} {
  const allowedHosts = (): Set<string> => new Set([`127.0.0.1:${port()}`, `localhost:${port()}`, `[::1]:${port()}`]);
  const hostOk = (req: IncomingMessage): boolean => allowedHosts().has((req.headers.host ?? '').toLowerCase());
  const originOk = (req: IncomingMessage): boolean => {
    const origin = req.headers.origin;
    if (origin === undefined) return true; // not a browser (scripts on this machine): the token decides
    return [...allowedHosts()].some((h) => origin.toLowerCase() === `http://${h}`);
  };
  return { hostOk, originOk };
}

/** What a viewer's socket is served with. */
interface ConnectionContext {
  service: ServebenchService;
  fanout: EventFanout;
  send: (ws: WebSocket, message: unknown) => void;
  onError: (line: string) => void;
}

/** One viewer's socket: its errors logged, its calls answered, and the run's events (replay first) fanned out to it. */
function onConnection(ws: WebSocket, { service, fanout, send, onError }: ConnectionContext): void {
  // Without this listener a bad frame (too big, bad UTF-8, unmasked, unknown opcode) would throw and end
  // the process; ws has already closed this client with the matching code (1009, 1007, 1002).
  ws.on('error', (error: Error & { code?: string }) =>
    onError(`ui server: closed a client: ${error.code ?? 'error'}: ${error.message}`),
  );
  let remove: () => void = () => undefined;
  ws.on('close', () => remove());
  ws.on('message', (data, isBinary) => {
    try {
      onMessage(service, send, ws, data, isBinary);
    } catch (error) {
      onError(`ui server: bad message: ${(error as Error).message}`);
      send(ws, { id: null, error: 'bad message' });
    }
  });
  // The run in progress so far, then every new event: a reloaded page rebuilds its live view.
  remove = fanout.add(ws, replayOf(service));
  if (ws.readyState !== ws.OPEN) remove();
}

/** Binds the HTTP server; a bind error (port taken) rejects, later errors are the caller's to listen for. */
function listen(http: Server, port: number, host: string): Promise<void> {
  return new Promise<void>((resolveListen, reject) => {
    http.once('error', reject);
    http.listen(port, host, () => {
      http.off('error', reject);
      resolveListen();
    });
  });
}

/**
 * Serves the renderer over HTTP and the contract over a WebSocket at /rpc?token=T: `{id, method, args}`
 * in, `{id, result}` or `{id, error}` out, and every service event pushed as `{event}` (the run in progress
 * first, so a reloaded page rebuilds its live view). Loopback only, Host and Origin checked, the token
 * required; whatever a client sends, only that client is closed (1009 too big, 1007 bad UTF-8,
 * 1002 protocol error, 1003 binary) and the server and the run go on.
 */
export async function startUiServer(options: UiServerOptions): Promise<UiServer> {
  const host = options.host ?? '127.0.0.1';
  if (!LOOPBACK.has(host)) throw new UserError(`the UI server binds loopback only (127.0.0.1), not '${host}'`);
  const { service, staticDir } = options;
  const token = options.token ?? randomBytes(24).toString('base64url');
  const onError = (line: string): void => {
    try {
      options.onError?.(line);
    } catch {
      // a logger's failure is not the server's
    }
  };
  let port = options.port;

  const { hostOk, originOk } = hostChecks(() => port);

  const http = createServer((req, res) => {
    res.on('error', () => res.destroy());
    if (!hostOk(req)) {
      res.writeHead(403, { 'content-type': 'text/plain; charset=utf-8' }).end('forbidden host\n');
      return;
    }
    serveStatic(staticDir, req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500).end();
      else res.destroy();
    });
  });
  // A socket error, a failed accept or a malformed request is one client's problem, never the process's.
  http.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    if (error.code !== 'ECONNRESET' && socket.writable)
      socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
    else socket.destroy();
  });

  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_MESSAGE_BYTES, clientTracking: true });
  wss.on('error', (error: Error) => onError(`ui server: websocket server error: ${error.message}`));
  wss.on('wsClientError', (error: Error, socket: Duplex) => {
    onError(`ui server: refused a bad websocket handshake: ${error.message}`);
    refuseUpgrade(socket, 400, 'bad websocket handshake');
  });

  http.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => socket.destroy());
    const refusal = upgradeRefusal(req, hostOk, originOk, token);
    if (refusal) return refuseUpgrade(socket, refusal[0], refusal[1]);
    try {
      wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req));
    } catch (error) {
      onError(`ui server: upgrade failed: ${(error as Error).message}`);
      socket.destroy();
    }
  });

  // Events reach the viewers in frames, off the run's time; a viewer that stops reading is dropped.
  const fanout = new EventFanout({ onDrop: onError });
  const unsubscribe = service.subscribe((event) => fanout.push(event));
  const send = (ws: WebSocket, message: unknown): void => sendJson(fanout, ws, message);

  wss.on('connection', (ws: WebSocket) => onConnection(ws, { service, fanout, send, onError }));

  await listen(http, port, host);
  http.on('error', (error: Error) => onError(`ui server: ${error.message}`));
  port = (http.address() as AddressInfo).port;
  const shownHost = host === '::1' ? '[::1]' : host;

  return {
    url: `http://${shownHost}:${port}/?token=${token}`,
    port,
    host,
    token,
    clients: () => wss.clients.size,
    async close() {
      unsubscribe();
      fanout.close();
      for (const ws of wss.clients) ws.terminate();
      await new Promise<void>((r) => wss.close(() => r()));
      http.closeAllConnections();
      await new Promise<void>((r) => http.close(() => r()));
    },
  };
}
