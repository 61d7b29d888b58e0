import { createServer } from 'node:http';
import type { IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';
import type { WebSocket } from 'ws';
import type { ContractEvent } from '../../shared/contract.js';
import type { ServebenchService } from '../api.js';
import { UserError } from '../errors.js';
import { dispatchCall } from './dispatch.js';
import { serveStatic } from './static-files.js';

export { dispatchCall, errorLine, isContractMethod, zodErrorLine } from './dispatch.js';
export type { CallOutcome } from './dispatch.js';

/** Options of the `servebench ui` server. */
export interface UiServerOptions {
  service: ServebenchService;
  /** 0 = a free port. */
  port: number;
  /** Loopback only: the server can start engines, so nothing off this machine may reach it. */
  host?: string;
  /** The built renderer (out/renderer). */
  staticDir: string;
}

/** A running UI server. */
export interface UiServer {
  url: string;
  port: number;
  host: string;
  /** Number of connected WebSocket clients. */
  clients(): number;
  close(): Promise<void>;
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1']);
/** Events kept for clients that connect mid-run (a reload must not lose the live view). */
const REPLAY_LIMIT = 20_000;

/**
 * Serves the renderer over HTTP and the contract over a WebSocket at /rpc: `{id, method, args}` in,
 * `{id, result}` or `{id, error}` out, and every service event pushed as `{event}` to every client.
 */
export async function startUiServer(options: UiServerOptions): Promise<UiServer> {
  const host = options.host ?? '127.0.0.1';
  if (!LOOPBACK.has(host)) throw new UserError(`the UI server binds loopback only (127.0.0.1), not '${host}'`);
  const { service, staticDir } = options;
  let port = options.port;

  // DNS rebinding and cross-site pages: only our own host names, and only our own origin for the socket.
  const allowedHosts = (): Set<string> => new Set([`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`]);
  const hostOk = (req: IncomingMessage): boolean => allowedHosts().has((req.headers.host ?? '').toLowerCase());
  const originOk = (req: IncomingMessage): boolean => {
    const origin = req.headers.origin;
    if (origin === undefined) return true; // not a browser (tests, scripts on this machine)
    return [...allowedHosts()].some((h) => origin.toLowerCase() === `http://${h}`);
  };

  const http = createServer((req, res) => {
    if (!hostOk(req)) {
      res.writeHead(403, { 'content-type': 'text/plain; charset=utf-8' }).end('forbidden host\n');
      return;
    }
    serveStatic(staticDir, req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500).end();
      else res.destroy();
    });
  });
  const wss = new WebSocketServer({
    server: http,
    path: '/rpc',
    maxPayload: 4 * 1024 * 1024,
    verifyClient: ({ req }: { req: IncomingMessage }, done: (ok: boolean, code?: number, message?: string) => void) =>
      hostOk(req) && originOk(req) ? done(true) : done(false, 403, 'forbidden origin'),
  });

  let replay: ContractEvent[] = [];
  const send = (ws: WebSocket, message: unknown): void => {
    if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(message));
  };
  const unsubscribe = service.subscribe((event) => {
    if (event.type === 'run-started') replay = [];
    if (event.type === 'run-finished') replay = [];
    else if (replay.length < REPLAY_LIMIT) replay.push(event);
    const text = JSON.stringify({ event });
    for (const ws of wss.clients) if (ws.readyState === ws.OPEN) ws.send(text);
  });

  wss.on('connection', (ws) => {
    for (const event of replay) send(ws, { event });
    ws.on('message', (data) => {
      let message: { id?: unknown; method?: unknown; args?: unknown };
      try {
        message = JSON.parse(String(data)) as typeof message;
      } catch {
        send(ws, { id: null, error: 'bad message: not JSON' });
        return;
      }
      const id = typeof message?.id === 'number' || typeof message?.id === 'string' ? message.id : null;
      void dispatchCall(service, message?.method, message?.args).then((outcome) =>
        send(ws, outcome.ok ? { id, result: outcome.result } : { id, error: outcome.error }),
      );
    });
  });

  await new Promise<void>((resolveListen, reject) => {
    http.once('error', reject);
    http.listen(port, host, () => {
      http.off('error', reject);
      resolveListen();
    });
  });
  port = (http.address() as AddressInfo).port;
  const shownHost = host === '::1' ? '[::1]' : host;

  return {
    url: `http://${shownHost}:${port}/`,
    port,
    host,
    clients: () => wss.clients.size,
    async close() {
      unsubscribe();
      for (const ws of wss.clients) ws.terminate();
      await new Promise<void>((r) => wss.close(() => r()));
      http.closeAllConnections();
      await new Promise<void>((r) => http.close(() => r()));
    },
  };
}
