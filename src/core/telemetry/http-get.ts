import { request } from 'undici';

/** GETs a URL as text; injectable so tests scrape fakes. Rejects on network errors. */
export type HttpGetText = (url: string, options?: { timeoutMs?: number }) => Promise<{ status: number; body: string }>;

/** The real GET, on undici. */
export const undiciGetText: HttpGetText = async (url, options = {}) => {
  const timeoutMs = options.timeoutMs ?? 5_000;
  const res = await request(url, {
    method: 'GET',
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
    signal: AbortSignal.timeout(timeoutMs),
  });
  const body = await res.body.text();
  return { status: res.statusCode, body };
};

/** One-line description of why a GET failed. */
export function describeHttpError(error: unknown): string {
  const e = error as { code?: string; message?: string; cause?: { code?: string; message?: string } } | undefined;
  return e?.cause?.code ?? e?.code ?? e?.cause?.message ?? e?.message ?? String(error);
}
