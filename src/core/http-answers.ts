/** What a server's HTTP answer means when it is not the answer asked for: a redirect, or headers no client takes. */
import { maxHeaderSize } from 'node:http';

/** What went wrong and the fix, apart (a server failure shows them apart) or as one line (`line`). */
export interface AnswerProblem {
  message: string;
  fix: string;
}

/** The problem as one line: what went wrong, then the fix. */
const problemLine = (p: AnswerProblem): string => `${p.message}: ${p.fix}`;

/** True for the statuses that send the client elsewhere with a Location (304 Not Modified is no redirect). */
export function isRedirect(status: number | undefined): boolean {
  return status === 301 || status === 302 || status === 303 || status === 307 || status === 308;
}

/** Where a redirect points, resolved against the URL asked; the raw text when it is no URL. */
function resolved(location: string, requestUrl: string): string {
  try {
    return new URL(location, requestUrl).href;
  } catch {
    return location;
  }
}

/**
 * A redirect: the status, where it points and the --url to use instead. servebench follows no redirect: a POST moved
 * by 301/302 becomes a GET, and an answer from elsewhere would be measured as this server's. `path` is the part of
 * the request URL below --url (e.g. /v1/chat/completions): a Location that ends with it names the base URL to give.
 */
export function redirectProblem(
  status: number,
  location: string | undefined,
  requestUrl: string,
  path: string,
): AnswerProblem {
  if (!location)
    return { message: `the server answered ${status} (a redirect) without a Location`, fix: 'check --url' };
  const to = resolved(location, requestUrl).slice(0, 300);
  const base = path && to.endsWith(path) ? to.slice(0, to.length - path.length) : '';
  return {
    message: `the server answered ${status} to ${to}`,
    fix: `point --url there${base ? ` (--url ${base})` : ''}`,
  };
}

/** A redirect as one line (see redirectProblem). */
export const redirectLine = (status: number, location: string | undefined, requestUrl: string, path: string): string =>
  problemLine(redirectProblem(status, location, requestUrl, path));

/** A header value as one string (undici gives a list for repeated headers). */
export function headerText(value: string | string[] | undefined | null): string | undefined {
  if (value === null || value === undefined) return undefined;
  return Array.isArray(value) ? value.join(', ') : value;
}

/**
 * A transport error that means the server did answer, but with something no HTTP client takes (headers past the
 * client's limit, a response that is not HTTP); null for an error that says nothing answered.
 */
export function badAnswerProblem(code: string | undefined): AnswerProblem | null {
  if (code === 'UND_ERR_HEADERS_OVERFLOW' || code === 'HPE_HEADER_OVERFLOW') {
    return {
      message: `the server answered with response headers over ${maxHeaderSize >> 10} KiB (too many or too large)`,
      fix: 'a proxy or server in front adds them; point --url at the server itself',
    };
  }
  if (code?.startsWith('HPE_')) {
    return {
      message: `the server's answer is not valid HTTP (${code})`,
      fix: 'is --url the HTTP port of an OpenAI-compatible server?',
    };
  }
  return null;
}

/** A bad answer as one line, or null (see badAnswerProblem). */
export function badAnswerLine(code: string | undefined): string | null {
  const problem = badAnswerProblem(code);
  return problem ? problemLine(problem) : null;
}
