import type { IncomingMessage, ServerResponse } from 'node:http';

/** Header on every answer of the built-in simulator, so an attached run is marked SIMULATED. */
export const SIMULATOR_HEADER = 'x-servebench-simulator';

/** An error the simulator answers with its HTTP status and an OpenAI-style error body. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly type = 'BadRequestError',
  ) {
    super(message);
  }
}

const MAX_BODY = 64 * 1024 * 1024;

/** Reads a JSON request body ({} when empty); a 413 or 400 HttpError when too large or not JSON. */
function readBody(req: IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let size = 0;
    req.on('data', (b: Buffer) => {
      size += b.length;
      if (size > MAX_BODY) {
        reject(new HttpError(413, 'request body too large'));
        req.destroy();
        return;
      }
      parts.push(b);
    });
    req.on('end', () => {
      if (size === 0) return resolve({});
      try {
        resolve(JSON.parse(Buffer.concat(parts).toString('utf8')));
      } catch {
        reject(new HttpError(400, 'request body is not valid JSON'));
      }
    });
    req.on('error', reject);
  });
}

/** Sends a JSON body with its length. */
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** Sends a Prometheus text exposition. */
export function sendText(res: ServerResponse, text: string): void {
  res.writeHead(200, {
    'content-type': 'text/plain; version=0.0.4; charset=utf-8',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

/** The OpenAI-style error body both engines answer with. */
export function errorBody(status: number, message: string, type: string): unknown {
  return { error: { message, type, param: null, code: status } };
}

/** An optional integer field of a request body, at least `min`; a 400 HttpError otherwise. */
export function optInt(body: Record<string, unknown>, key: string, min: number): number | undefined {
  const v = body[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min) {
    throw new HttpError(400, `${key} must be an integer >= ${min}, got ${JSON.stringify(v)}`);
  }
  return v;
}

/** A route's handler: the request, its response, and when it arrived (engine clock). */
export type Route = (
  req: IncomingMessage,
  res: ServerResponse,
  receivedNs: bigint,
  receivedMs: number,
) => Promise<void> | void;

/** A POST handler: the parsed JSON object body first. */
export type PostRoute = (
  body: Record<string, unknown>,
  req: IncomingMessage,
  res: ServerResponse,
  receivedNs: bigint,
  receivedMs: number,
) => void;

/** The simulator's routes by method and path, answering FastAPI's 404 and 405 as both engines do. */
export class Router {
  private readonly routes = new Map<string, Route>();

  /** Adds a POST route whose body must be a JSON object. */
  post(path: string, fn: PostRoute): void {
    this.routes.set(`POST ${path}`, async (req, res, ns, ms) => {
      const body = await readBody(req);
      if (!body || typeof body !== 'object' || Array.isArray(body))
        throw new HttpError(400, 'request body must be a JSON object');
      fn(body as Record<string, unknown>, req, res, ns, ms);
    });
  }

  /** Adds a route that takes no body, for POST and GET (an admin action such as a cache flush). */
  action(path: string, fn: (res: ServerResponse) => void, methods: ReadonlyArray<'GET' | 'POST'> = ['POST']): void {
    const route: Route = (req, res) => {
      req.resume();
      fn(res);
    };
    for (const m of methods) this.routes.set(`${m} ${path}`, route);
  }

  /** Adds a GET route. */
  get(path: string, fn: (res: ServerResponse) => void): void {
    this.routes.set(`GET ${path}`, (_req, res) => fn(res));
  }

  /** Answers one request: its route, else 404/405; an HttpError becomes its status and error body. */
  handle(req: IncomingMessage, res: ServerResponse, receivedNs: bigint, receivedMs: number): void {
    // A run attached with --url learns from this that its numbers are simulated.
    res.setHeader(SIMULATOR_HEADER, '1');
    const q = req.url?.indexOf('?') ?? -1;
    const path = q >= 0 ? req.url!.slice(0, q) : (req.url ?? '/');
    const route = this.routes.get(`${req.method} ${path}`);
    if (!route) {
      // FastAPI's answers, as both engines give them.
      const known = this.routes.has(`GET ${path}`) || this.routes.has(`POST ${path}`);
      sendJson(res, known ? 405 : 404, { detail: known ? 'Method Not Allowed' : 'Not Found' });
      req.resume();
      return;
    }
    Promise.resolve()
      .then(() => route(req, res, receivedNs, receivedMs))
      .catch((error: unknown) => {
        if (res.headersSent) {
          res.destroy();
          return;
        }
        if (error instanceof HttpError) sendJson(res, error.status, errorBody(error.status, error.message, error.type));
        else sendJson(res, 500, errorBody(500, String(error), 'InternalServerError'));
      });
  }
}
