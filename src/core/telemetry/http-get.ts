import { request } from 'undici';

/** Options of one bounded GET. */
interface HttpGetOptions {
  /** Whole exchange, body included (default 5 s). */
  timeoutMs?: number;
  /** Most body bytes read (default MAX_SCRAPE_BYTES): past it the GET fails with code SB_BODY_TOO_LARGE. */
  maxBytes?: number;
  /** Gives up at once (the scraper stopping, Ctrl-C). */
  signal?: AbortSignal;
}

/** GETs a URL as text; injectable so tests scrape fakes. Rejects on network errors, time-outs and oversized bodies. */
export type HttpGetText = (url: string, options?: HttpGetOptions) => Promise<{ status: number; body: string }>;

/** Most a /metrics page may be: a vLLM page of eight data-parallel ranks is well under 1 MiB. */
export const MAX_SCRAPE_BYTES = 8 << 20;

/** The error of a body past its cap (a flooding or endless /metrics page). */
export class BodyTooLargeError extends Error {
  readonly code = 'SB_BODY_TOO_LARGE';
  constructor(readonly maxBytes: number) {
    super(`answered more than ${maxBytes >> 20} MiB`);
  }
}

/** The real GET, on undici: the body is read chunk by chunk and dropped as soon as it passes the cap. */
export const undiciGetText: HttpGetText = async (url, options = {}) => {
  const timeoutMs = options.timeoutMs ?? 5_000;
  const maxBytes = options.maxBytes ?? MAX_SCRAPE_BYTES;
  const timeout = AbortSignal.timeout(timeoutMs);
  const res = await request(url, {
    method: 'GET',
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
    signal: options.signal ? AbortSignal.any([timeout, options.signal]) : timeout,
  });
  const parts: Buffer[] = [];
  let size = 0;
  for await (const chunk of res.body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) {
      res.body.destroy();
      throw new BodyTooLargeError(maxBytes);
    }
    parts.push(chunk);
  }
  return { status: res.statusCode, body: Buffer.concat(parts).toString('utf8') };
};

/** True for a GET that ran out of time (the whole-exchange signal, or undici's headers or body time-out). */
export function isTimeout(error: unknown): boolean {
  const e = error as { name?: string; code?: string; cause?: { name?: string; code?: string } } | undefined;
  const timeoutCodes = ['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT'];
  return (
    e?.name === 'TimeoutError' ||
    e?.cause?.name === 'TimeoutError' ||
    timeoutCodes.includes(e?.code ?? '') ||
    timeoutCodes.includes(e?.cause?.code ?? '')
  );
}

/** One-line description of why a GET failed. */
export function describeHttpError(error: unknown): string {
  if (error instanceof BodyTooLargeError) return error.message;
  if (isTimeout(error)) return 'timed out';
  const e = error as { code?: string; message?: string; cause?: { code?: string; message?: string } } | undefined;
  return e?.cause?.code ?? e?.code ?? e?.cause?.message ?? e?.message ?? String(error);
}
