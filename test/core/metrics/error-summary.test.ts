import { describe, expect, it } from 'vitest';
import { firstBatchClientError } from '../../../src/core/benchmark.js';
import type { LevelPlan } from '../../../src/core/load/level-plan.js';
import {
  MAX_QUOTED_ERROR,
  clientErrorFix,
  commonestError,
  isContextSizeError,
  serverSaid,
} from '../../../src/core/metrics/error-summary.js';
import { failed } from './make-record.js';

const http = (status: number, message: string, over = {}) =>
  failed(0, 5, `http-${status}`, { httpStatus: status, error: `HTTP ${status}: ${message}`, ...over });

describe('commonestError', () => {
  it('counts messages that differ only in numbers as one, quoting the first seen', () => {
    const top = commonestError([
      http(400, 'request (1028 tokens) exceeds the available context size (1024 tokens)'),
      http(400, 'request (1031 tokens) exceeds the available context size (1024 tokens)'),
      failed(0, 5, 'timeout', { error: 'timed out after 60000 ms' }),
    ]);
    expect(top).toEqual({
      kind: 'http-400',
      message: 'HTTP 400: request (1028 tokens) exceeds the available context size (1024 tokens)',
      count: 2,
    });
    expect(serverSaid(top!)).toBe(
      'the server said (2×): "HTTP 400: request (1028 tokens) exceeds the available context size (1024 tokens)"',
    );
  });

  it("leaves out user cancels; a client error is 'commonest error', not the server's words", () => {
    const top = commonestError([
      failed(0, 5, 'cancelled', { error: 'cancelled by the user' }),
      failed(0, 5, 'timeout', { error: 'timed out after 60000 ms' }),
    ]);
    expect(serverSaid(top!)).toBe('commonest error: "timed out after 60000 ms"');
  });

  it('cuts an HTML page to one quotable line', () => {
    const page = `<html>\n<body>${'x'.repeat(5000)}</body></html>`;
    const top = commonestError([http(502, page)])!;
    expect(top.message).not.toContain('\n');
    expect(top.message.length).toBe(MAX_QUOTED_ERROR);
  });
});

describe('the fix for a client error', () => {
  it('names the lengths and the context flags for llama.cpp, vLLM and SGLang context errors', () => {
    for (const message of [
      'request (1028 tokens) exceeds the available context size (1024 tokens), try increasing it',
      "This model's maximum context length is 1024 tokens. However, you requested 1028 tokens",
      "Requested token count exceeds the model's maximum context length of 1024 tokens.",
    ]) {
      expect(isContextSizeError(message), message).toBe(true);
      expect(clientErrorFix(400, message, 900, 128)).toBe(
        "each request needs 900 + 128 tokens of context: lower --input-len/--output-len, or raise the server's context " +
          '(vLLM --max-model-len, SGLang --context-length, llama.cpp -c)',
      );
    }
    expect(clientErrorFix(401, 'Unauthorized', 1, 1)).toMatch(/--api-key/);
    expect(clientErrorFix(404, 'model not found', 1, 1)).toMatch(/--model/);
  });
});

describe('firstBatchClientError', () => {
  it('a first round refused with one 4xx (warm-up off) stops too, naming the round', () => {
    const reason = firstBatchClientError([http(401, 'Unauthorized'), http(401, 'Unauthorized')], plan);
    expect(reason).toBe(
      'the server rejected all 2 requests of the first round: "HTTP 401: Unauthorized" — pass the server\'s key with --api-key (or SERVEBENCH_API_KEY)',
    );
  });

  const plan: LevelPlan = { concurrency: 2, inputLen: 1000, outputLen: 28, rounds: 1, requestsPerRound: 2, warmup: 2 };
  const warm = (status: number, message = 'bad request') => http(status, message, { round: -1, warmup: true });

  it('every warm-up request refused with the same 4xx: the reason quotes the server and names the fix', () => {
    const reason = firstBatchClientError(
      [
        warm(400, 'request (1028 tokens) exceeds the available context size (1024 tokens)'),
        warm(400, 'x (1 tokens) y'),
      ],
      plan,
    );
    expect(reason).toBe(
      'the server rejected all 2 warm-up requests: "HTTP 400: request (1028 tokens) exceeds the available context size ' +
        '(1024 tokens)" — each request needs 1000 + 28 tokens of context: lower --input-len/--output-len, or raise the server\'s ' +
        'context (vLLM --max-model-len, SGLang --context-length, llama.cpp -c)',
    );
  });

  it('anything else goes on: a success, mixed statuses, 5xx, 408 and 429 (they pass with time), no warm-up', () => {
    const ok = { ...warm(400), ok: true };
    expect(firstBatchClientError([warm(400), ok], plan)).toBeNull();
    expect(firstBatchClientError([warm(400), warm(404)], plan)).toBeNull();
    expect(firstBatchClientError([warm(500), warm(500)], plan)).toBeNull();
    expect(firstBatchClientError([warm(408)], plan)).toBeNull();
    expect(firstBatchClientError([warm(429)], plan)).toBeNull();
    expect(firstBatchClientError([], plan)).toBeNull();
    // A batch that mixes rounds is not one batch.
    expect(firstBatchClientError([warm(400), http(400, 'bad request')], plan)).toBeNull();
  });
});
