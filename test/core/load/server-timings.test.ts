import { describe, expect, it } from 'vitest';
import { outcomeToRecord } from '../../../src/core/load/outcome-to-record.js';
import { StreamAccumulator } from '../../../src/core/load/stream-accumulator.js';

const base = { id: 'chatcmpl-1', object: 'chat.completion.chunk', model: 'm', created: 1 };
const chunk = (choices: unknown[], extra: Record<string, unknown> = {}): string =>
  JSON.stringify({ ...base, choices, ...extra });
const delta = (content: string | null, finish: string | null = null): unknown => ({
  index: 0,
  finish_reason: finish,
  delta: content === null ? {} : { content },
});
// tools/server result_timings::to_json (server-task.h): what llama.cpp appends to its last chunk.
const timings = {
  cache_n: 0,
  prompt_n: 12,
  prompt_ms: 35.5,
  prompt_per_token_ms: 2.96,
  prompt_per_second: 338,
  predicted_n: 3,
  predicted_ms: 20.25,
  predicted_per_token_ms: 6.75,
  predicted_per_second: 148,
};

/** A llama.cpp chat stream: role-only first chunk, text, the finish chunk, and (with include_usage) a usage chunk. */
function llamaStream(acc: StreamAccumulator, includeUsage: boolean): void {
  acc.onEvent(chunk([{ index: 0, finish_reason: null, delta: { role: 'assistant', content: null } }]), 1);
  acc.onEvent(chunk([delta(' a')]), 40);
  acc.onEvent(chunk([delta(' b')]), 50);
  acc.onEvent(chunk([delta(' c')]), 60);
  acc.onEvent(chunk([delta(null, 'length')], includeUsage ? {} : { timings }), 61);
  if (includeUsage)
    acc.onEvent(chunk([], { usage: { completion_tokens: 3, prompt_tokens: 12, total_tokens: 15 }, timings }), 61);
  acc.onEvent('[DONE]', 62);
}

describe("llama.cpp's own timings", () => {
  it('are read from the usage chunk (include_usage) and from the finish chunk without it', () => {
    for (const includeUsage of [true, false]) {
      const acc = new StreamAccumulator();
      llamaStream(acc, includeUsage);
      expect(acc.result().serverTimings).toEqual({ promptMs: 35.5, decodeMs: 20.25 });
    }
  });

  it('are absent for other servers and ignored when malformed', () => {
    const plain = new StreamAccumulator();
    plain.onEvent(chunk([delta('x', 'stop')]), 5);
    expect(plain.result().serverTimings).toBeNull();
    for (const bad of [{ prompt_ms: '3', predicted_ms: 4 }, { prompt_ms: 3 }, { prompt_ms: -1, predicted_ms: 4 }, 7]) {
      const acc = new StreamAccumulator();
      acc.onEvent(chunk([delta('x', 'stop')], { timings: bad }), 5);
      expect(acc.result().serverTimings).toBeNull();
    }
  });

  it('are recorded per request as serverPromptMs and serverDecodeMs', () => {
    const acc = new StreamAccumulator();
    llamaStream(acc, true);
    const outcome = { id: 1, requestTag: 't-1', sendMs: 0, endMs: 62, httpStatus: 200, result: acc.result() };
    const record = outcomeToRecord(outcome, { levelIndex: 0, round: 0, expectedIn: 12, expectedOut: 3 });
    expect(record).toMatchObject({ serverPromptMs: 35.5, serverDecodeMs: 20.25, firstTokenMs: 40, nOut: 3 });

    const other = new StreamAccumulator();
    other.onEvent(chunk([delta('x', 'stop')]), 5);
    const plain = outcomeToRecord(
      { id: 2, requestTag: 't-2', sendMs: 0, endMs: 6, httpStatus: 200, result: other.result() },
      { levelIndex: 0, round: 0, expectedIn: 1, expectedOut: 1 },
    );
    expect('serverPromptMs' in plain || 'serverDecodeMs' in plain).toBe(false);
  });
});
