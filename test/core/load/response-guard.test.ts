import { describe, expect, it } from 'vitest';
import {
  checkTimeouts,
  defaultFirstByteTimeoutMs,
  defaultIdleTimeoutMs,
  describeNonStream,
  looksLikeSse,
  streamModeOf,
} from '../../../src/core/load/response-guard.js';

const limits = { timeoutMs: 300_000, firstByteTimeoutMs: 300_000, idleTimeoutMs: 150_000 };

describe('checkTimeouts (times from an injected clock)', () => {
  it('waits until the first-byte limit while nothing came back', () => {
    expect(checkTimeouts(limits, 1000, null, 1000 + 5_000)).toEqual({ waitMs: 295_000 });
  });

  it('names the first-byte limit when nothing came back by then', () => {
    const v = checkTimeouts({ ...limits, firstByteTimeoutMs: 10_000 }, 0, null, 10_000, {
      firstByte: false,
      idle: true,
    });
    expect(v).toMatchObject({ kind: 'first-byte-timeout' });
    expect((v as { message: string }).message).toContain('firstByteTimeoutMs');
  });

  it('a default first-byte limit is the whole --timeout, named so', () => {
    const v = checkTimeouts(limits, 0, null, 300_000);
    expect(v).toMatchObject({ kind: 'first-byte-timeout' });
    expect((v as { message: string }).message).toContain('--timeout');
  });

  it('a queue of minutes between headers and the first token trips nothing under the defaults', () => {
    // Headers at 0 (vLLM answers at once), first token 120 s later.
    expect(checkTimeouts(limits, 0, 0, 120_000)).toEqual({ waitMs: 30_000 });
  });

  it('names the idle limit after a silence that long, counted from the last read', () => {
    expect(checkTimeouts(limits, 0, 50_000, 50_000 + 149_999)).toEqual({ waitMs: 1 });
    expect(checkTimeouts(limits, 0, 50_000, 200_000)).toMatchObject({ kind: 'idle-timeout' });
  });

  it('the overall limit ends a stream that never pauses but never ends', () => {
    expect(checkTimeouts(limits, 0, 299_999, 300_000)).toMatchObject({ kind: 'timeout' });
  });

  it('defaults derive from --timeout and never fall under 30 s of idle', () => {
    expect(defaultFirstByteTimeoutMs(300_000)).toBe(300_000);
    expect(defaultIdleTimeoutMs(300_000)).toBe(150_000);
    expect(defaultIdleTimeoutMs(40_000)).toBe(30_000);
    expect(defaultIdleTimeoutMs(10_000)).toBe(10_000);
  });
});

describe('what counts as an event stream', () => {
  it('reads the content type, and sniffs a missing or plain one', () => {
    expect(streamModeOf('text/event-stream; charset=utf-8')).toBe('sse');
    expect(streamModeOf('application/json')).toBe('other');
    expect(streamModeOf('text/html')).toBe('other');
    expect(streamModeOf(undefined)).toBeNull();
    expect(streamModeOf('text/plain')).toBeNull();
    expect(looksLikeSse('data: {"a":1}')).toBe(true);
    expect(looksLikeSse('\n: ping')).toBe(true);
    expect(looksLikeSse('da')).toBeNull();
    expect(looksLikeSse('<html>')).toBe(false);
    expect(looksLikeSse('{"choices":[]}')).toBe(false);
  });

  it('says a whole JSON completion is not streamed, and quotes the first bytes of anything else', () => {
    const chat = JSON.stringify({ object: 'chat.completion', choices: [{ message: { content: 'hi' } }] });
    expect(describeNonStream('application/json', chat)).toContain('non-streamed chat completion');
    const text = JSON.stringify({ object: 'text_completion', choices: [{ text: 'hi' }] });
    expect(describeNonStream('application/json', text)).toContain('non-streamed completion');
    const html = describeNonStream('text/html; charset=utf-8', '<html>\n<body>login</body></html>');
    expect(html).toContain('text/html');
    expect(html).toContain('<html> <body>login</body></html>');
  });
});
