import { describe, expect, it } from 'vitest';
import { SseParser } from '../../../src/core/load/sse-parser.js';
import { StreamAccumulator } from '../../../src/core/load/stream-accumulator.js';

function collect(): { parser: SseParser; events: Array<[string, number]> } {
  const events: Array<[string, number]> = [];
  const parser = new SseParser((data, t) => events.push([data, t]));
  return { parser, events };
}

describe('SseParser line ends and the BOM (WHATWG event stream rules)', () => {
  it('takes a lone CR as a line end: each event is dispatched at the read that ended it', () => {
    const { parser, events } = collect();
    parser.push('data: one\r\rdata: a\rdata: b\r', 1);
    parser.push('\r', 2);
    expect(events).toEqual([
      ['one', 1],
      ['a\nb', 2],
    ]);
  });

  it('takes a CRLF split between two reads as one line end, not as a line end and an empty line', () => {
    const { parser, events } = collect();
    parser.push('data: a\r', 1);
    parser.push('\ndata: b\r', 2);
    parser.push('\n\r', 3);
    parser.push('\n', 4);
    expect(events).toEqual([['a\nb', 3]]);
    expect(parser.unknownLines).toBe(0);
  });

  it('strips one leading UTF-8 BOM, even split over reads, and keeps the first event', () => {
    const { parser, events } = collect();
    const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('data: first\n\n')]);
    parser.push(bytes.subarray(0, 2), 1);
    parser.push(bytes.subarray(2), 2);
    expect(events).toEqual([['first', 2]]);
    expect(parser.unknownLines).toBe(0);
  });

  it('strips the BOM only at the very start: a second one is part of the line', () => {
    const { parser, events } = collect();
    parser.push('\uFEFFdata: a\n\n\uFEFFdata: b\n\n', 1);
    expect(events.map((e) => e[0])).toEqual(['a']);
    expect(parser.unknownLines).toBe(1);
  });
});

describe('StreamAccumulator after [DONE]', () => {
  it('ignores every event after [DONE]: no tokens, no usage, no error from them', () => {
    const acc = new StreamAccumulator();
    const chunk = (content: string, usage?: object): string =>
      JSON.stringify({ choices: [{ delta: { content } }], ...(usage ? { usage } : {}) });
    acc.onEvent(chunk('hi', { completion_tokens: 1, prompt_tokens: 3 }), 5);
    acc.onEvent('[DONE]', 6);
    acc.onEvent(chunk('late', { completion_tokens: 9, prompt_tokens: 3 }), 7);
    acc.onEvent(JSON.stringify({ error: { message: 'late error' } }), 8);
    const result = acc.result();
    expect(result.chunks).toEqual([[5, 1]]);
    expect(result.completionTokens).toBe(1);
    expect(result.error).toBeNull();
  });
});
