/** Pure rules the stream client applies to what a server sends: time-outs and what counts as an event stream. */

/** The three per-request limits, all in ms from the injected clock. */
export interface RequestLimits {
  timeoutMs: number;
  firstByteTimeoutMs: number;
  idleTimeoutMs: number;
}

/**
 * Idle gaps default to half of --timeout (at least 30 s, at most --timeout): a server that queues the request
 * may send its headers at once and then nothing until a slot frees (vLLM), so the gap must cover a long queue.
 */
export function defaultIdleTimeoutMs(timeoutMs: number): number {
  return Math.min(timeoutMs, Math.max(30_000, Math.round(timeoutMs / 2)));
}

/** The first byte may take the whole --timeout: llama.cpp sends no header until a slot takes the request. */
export function defaultFirstByteTimeoutMs(timeoutMs: number): number {
  return timeoutMs;
}

export interface TimeoutVerdict {
  kind: 'first-byte-timeout' | 'idle-timeout' | 'timeout';
  message: string;
}

function seconds(ms: number): string {
  return ms >= 10_000 ? `${Math.round(ms / 1000)} s` : `${+(ms / 1000).toFixed(2)} s`;
}

/**
 * Which limit, if any, has passed at nowMs; else the ms until the next one could. lastReadMs is the time of the
 * last byte received (headers included), null while nothing came back. A first-byte or idle limit that falls
 * on or before the overall one is named for itself.
 */
export function checkTimeouts(
  limits: RequestLimits,
  sendMs: number,
  lastReadMs: number | null,
  nowMs: number,
  derived: { firstByte: boolean; idle: boolean } = { firstByte: true, idle: true },
): TimeoutVerdict | { waitMs: number } {
  const overall = sendMs + limits.timeoutMs;
  const phase = lastReadMs === null ? sendMs + limits.firstByteTimeoutMs : lastReadMs + limits.idleTimeoutMs;
  if (phase <= overall && nowMs >= phase) {
    if (lastReadMs === null) {
      const flag = derived.firstByte ? '--timeout' : 'the request spec firstByteTimeoutMs';
      return {
        kind: 'first-byte-timeout',
        message: `no response byte within ${seconds(limits.firstByteTimeoutMs)} of sending (first-byte limit, set by ${flag}): the server took the request and answered nothing; raise ${flag} if it only queues`,
      };
    }
    const flag = derived.idle ? 'half of --timeout' : 'the request spec idleTimeoutMs';
    return {
      kind: 'idle-timeout',
      message: `the response went silent for ${seconds(limits.idleTimeoutMs)} (idle limit, ${flag}): the server stopped sending mid-response; raise --timeout if it is only slow`,
    };
  }
  if (nowMs >= overall) {
    return { kind: 'timeout', message: `timed out after ${seconds(limits.timeoutMs)} (--timeout)` };
  }
  return { waitMs: Math.min(overall, phase) - nowMs };
}

/** How a 200 response's body is to be read, from its content type (null: look at the first bytes). */
export function streamModeOf(contentType: string | undefined): 'sse' | 'other' | null {
  const ct = (contentType ?? '').toLowerCase();
  if (ct.includes('text/event-stream')) return 'sse';
  // A missing, plain-text or binary type may still carry SSE lines (some proxies relabel streams): sniff them.
  if (ct === '' || ct.startsWith('text/plain') || ct.startsWith('application/octet-stream')) return null;
  return 'other';
}

/** Sniff: true/false once the first non-blank bytes say whether this is SSE, null while too few have come. */
export function looksLikeSse(head: string): boolean | null {
  const text = head.replace(/^\uFEFF/, '').trimStart();
  if (text.length === 0) return null;
  for (const prefix of ['data:', ':', 'event:', 'id:', 'retry:']) {
    if (text.startsWith(prefix)) return true;
    if (prefix.startsWith(text)) return null;
  }
  return false;
}

function shortText(body: string, max = 120): string {
  const flat = body.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max)}…` : flat;
}

/** One line saying what a 200 that is not an event stream carried instead. */
export function describeNonStream(contentType: string | undefined, body: string): string {
  const ct = contentType ? contentType.split(';')[0]!.trim() : 'no content type';
  try {
    const parsed = JSON.parse(body) as { object?: unknown; choices?: Array<Record<string, unknown>> };
    const choice = Array.isArray(parsed?.choices) ? parsed.choices[0] : undefined;
    if (choice && (choice.message !== undefined || typeof choice.text === 'string')) {
      const kind =
        parsed.object === 'text_completion' || choice.message === undefined ? 'completion' : 'chat completion';
      return `the server answered 200 with one whole non-streamed ${kind} (${ct}), not an event stream: it ignores "stream": true, so no token timing can be seen; use a server or endpoint that streams`;
    }
  } catch {
    // Not JSON: describe the bytes.
  }
  return `the server answered 200 with ${ct}, not an event stream (text/event-stream); first bytes: ${JSON.stringify(shortText(body))}: check --url and --api`;
}
