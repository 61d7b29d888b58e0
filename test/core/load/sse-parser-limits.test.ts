import { describe, expect, it } from 'vitest';
import { SseParser } from '../../../src/core/load/sse-parser.js';

describe('SseParser limits and linear parsing', () => {
  it('stops with overflow "line" once an unfinished line passes the cap, and ignores what follows', () => {
    const events: string[] = [];
    const parser = new SseParser((d) => events.push(d), { maxLineChars: 100 });
    parser.push('data: ', 1);
    for (let i = 0; i < 10; i++) parser.push('x'.repeat(20), 2);
    expect(parser.overflow).toBe('line');
    parser.push('\n\ndata: late\n\n', 3);
    parser.end(4);
    expect(events).toEqual([]);
  });

  it('caps a long line that arrives whole in one read', () => {
    const parser = new SseParser(() => {}, { maxLineChars: 100 });
    parser.push(`data: ${'y'.repeat(200)}\n\n`, 1);
    expect(parser.overflow).toBe('line');
  });

  it('caps the data lines gathered for one event', () => {
    const parser = new SseParser(() => {}, { maxLineChars: 100, maxEventChars: 250 });
    for (let i = 0; i < 10; i++) parser.push(`data: ${'z'.repeat(50)}\n`, 1);
    expect(parser.overflow).toBe('event');
  });

  it('joins a line spread over many reads once, exactly as sent', () => {
    const events: string[] = [];
    const parser = new SseParser((d) => events.push(d));
    const payload = JSON.stringify({ text: 'a'.repeat(5000) });
    const line = `data: ${payload}\n\n`;
    for (let i = 0; i < line.length; i += 7) parser.push(line.slice(i, i + 7), i);
    expect(events).toEqual([payload]);
    expect(parser.overflow).toBeNull();
  });

  it('keeps a line split inside a CRLF and inside a multi-byte character', () => {
    const events: string[] = [];
    const parser = new SseParser((d) => events.push(d));
    const bytes = Buffer.from('data: héllo\r\n\r\n', 'utf8');
    for (let i = 0; i < bytes.length; i++) parser.push(bytes.subarray(i, i + 1), i);
    expect(events).toEqual(['héllo']);
  });
});
