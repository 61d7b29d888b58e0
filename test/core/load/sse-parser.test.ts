import { describe, expect, it } from 'vitest';
import { SseParser } from '../../../src/core/load/sse-parser.js';

function collect(): { parser: SseParser; events: Array<[string, number]> } {
  const events: Array<[string, number]> = [];
  const parser = new SseParser((data, t) => events.push([data, t]));
  return { parser, events };
}

describe('SseParser', () => {
  it('reassembles a line split across reads and stamps the event with the read that completed it', () => {
    const { parser, events } = collect();
    parser.push('data: {"a"', 1);
    parser.push(':1}\n', 2);
    expect(events).toEqual([]);
    parser.push('\n', 3);
    expect(events).toEqual([['{"a":1}', 3]]);
  });

  it('dispatches several events from one read, with CRLF line ends', () => {
    const { parser, events } = collect();
    parser.push('data: one\r\n\r\ndata: two\n\ndata: [DONE]\n\n', 7);
    expect(events.map((e) => e[0])).toEqual(['one', 'two', '[DONE]']);
    expect(events.every((e) => e[1] === 7)).toBe(true);
  });

  it('skips comments and keep-alives, ignores event/id/retry fields, counts unknown lines', () => {
    const { parser, events } = collect();
    parser.push(': ping\n\nevent: message\nid: 3\nretry: 10\ndata: x\n\nthis is not sse\n\n', 1);
    expect(events.map((e) => e[0])).toEqual(['x']);
    expect(parser.commentLines).toBe(1);
    expect(parser.unknownLines).toBe(1);
  });

  it('joins multi-line data with newlines and accepts data without a space', () => {
    const { parser, events } = collect();
    parser.push('data:a\ndata: b\n\n', 1);
    expect(events[0]?.[0]).toBe('a\nb');
  });

  it('keeps a multi-byte character split between reads intact', () => {
    const { parser, events } = collect();
    const bytes = Buffer.from('data: 你好\n\n', 'utf8');
    parser.push(bytes.subarray(0, 8), 1);
    parser.push(bytes.subarray(8), 2);
    expect(events).toEqual([['你好', 2]]);
  });

  it('flushes a last event that has no blank line at end of stream', () => {
    const { parser, events } = collect();
    parser.push('data: last', 1);
    parser.end(5);
    expect(events).toEqual([['last', 5]]);
  });
});
