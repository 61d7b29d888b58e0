import { describe, expect, it } from 'vitest';
import { FULL_COMPAT, buildRequestBody } from '../../../src/core/load/request-body.js';
import { StreamAccumulator } from '../../../src/core/load/stream-accumulator.js';
import { choiceRegex } from '../../../src/core/load/structured-body.js';
import { createStructuredValidator } from '../../../src/core/load/structured-validate.js';
import type { StructuredSpec } from '../../../src/core/workloads/structured-spec.js';
import { parseResponseFormat } from '../../../src/shared/structured-output.js';

const PERSON = {
  type: 'object',
  properties: { name: { type: 'string' }, age: { type: 'integer', minimum: 0 } },
  required: ['name', 'age'],
  additionalProperties: false,
};
const json: StructuredSpec = { format: { kind: 'json-schema', schema: PERSON, file: 'p.json' }, tools: null };
const regex: StructuredSpec = { format: { kind: 'regex', pattern: '[A-Z]{3}-\\d{4}' }, tools: null };
const choice: StructuredSpec = { format: { kind: 'choice', choices: ['yes', 'no'] }, tools: null };
const WEATHER = {
  name: 'get_weather',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};
const tools = (choiceOf: string): StructuredSpec => ({
  format: null,
  tools: { list: [{ type: 'function', function: WEATHER }], functions: [WEATHER], choice: choiceOf },
});

const body = (structured: StructuredSpec, api: 'chat' | 'completions' = 'chat') =>
  JSON.parse(
    buildRequestBody({
      api,
      model: 'm',
      prompt: 'p',
      outputLen: 64,
      ignoreEos: true,
      temperature: 0,
      stream: true,
      compat: FULL_COMPAT,
      structured,
    }),
  ) as Record<string, unknown>;

describe('--response-format parsing', () => {
  it('takes json-schema=FILE, regex=RE and choice=A,B, and names what is wrong otherwise', () => {
    expect(parseResponseFormat('json-schema=a.json')).toEqual({
      ok: true,
      spec: { kind: 'json-schema', file: 'a.json' },
    });
    expect(parseResponseFormat('regex=a=b')).toEqual({ ok: true, spec: { kind: 'regex', pattern: 'a=b' } });
    expect(parseResponseFormat('choice=a,b')).toEqual({ ok: true, spec: { kind: 'choice', choices: ['a', 'b'] } });
    for (const bad of ['yaml=x', 'regex=', 'regex=(', 'choice=,', 'json-schema'])
      expect(parseResponseFormat(bad).ok, bad).toBe(false);
  });
});

describe('structured request bodies', () => {
  it('a JSON Schema goes as response_format json_schema, and the output length is not forced', () => {
    const b = body(json);
    expect(b.response_format).toEqual({ type: 'json_schema', json_schema: { name: 'servebench', schema: PERSON } });
    expect(b).not.toHaveProperty('ignore_eos');
    expect(b).not.toHaveProperty('min_tokens');
    expect(b.max_tokens).toBe(64);
  });

  it("a regex goes as vLLM's structured_outputs.regex and SGLang's regex, on completions too", () => {
    expect(body(regex, 'completions')).toMatchObject({
      structured_outputs: { regex: '[A-Z]{3}-\\d{4}' },
      regex: '[A-Z]{3}-\\d{4}',
    });
  });

  it("choices go as vLLM's structured_outputs.choice, SGLang's regex and llama.cpp's GBNF grammar", () => {
    const b = body(choice);
    expect(b).toMatchObject({
      structured_outputs: { choice: ['yes', 'no'] },
      regex: '(yes|no)',
      grammar: 'root ::= "yes" | "no"',
    });
    expect(new RegExp(`^${choiceRegex(['a.b', 'c|d'])}$`).test('c|d')).toBe(true);
    expect(new RegExp(`^${choiceRegex(['a.b'])}$`).test('axb')).toBe(false);
  });

  it('tools go as OpenAI tools; a function name becomes tool_choice {type: function, function: {name}}', () => {
    expect(body(tools('required'))).toMatchObject({ tools: [{ type: 'function' }], tool_choice: 'required' });
    expect(body(tools('get_weather')).tool_choice).toEqual({ type: 'function', function: { name: 'get_weather' } });
  });
});

describe('validating an answer', () => {
  it('JSON Schema: parses and matches, else not-json or schema with where', () => {
    const v = createStructuredValidator(json);
    expect(v('{"name":"A","age":3}', [])).toEqual({ valid: true });
    expect(v('{"name":"A","age":', [])).toMatchObject({ valid: false, problem: 'not-json' });
    expect(v('{"name":"A","age":-1}', [])).toMatchObject({
      valid: false,
      problem: 'schema',
      detail: '/age: must be >= 0',
    });
  });

  it('regex: a full match only; choice: exact membership', () => {
    const r = createStructuredValidator(regex);
    expect(r('ABC-1234', []).valid).toBe(true);
    expect(r('xABC-1234', [])).toMatchObject({ valid: false, problem: 'regex' });
    const c = createStructuredValidator(choice);
    expect(c('no', []).valid).toBe(true);
    expect(c('no.', [])).toMatchObject({ valid: false, problem: 'choice' });
  });

  it("tool calls: a call is required unless auto or none, by name, with arguments matching the tool's parameters", () => {
    const call = (args: string, name = 'get_weather') => [{ name, arguments: args }];
    expect(createStructuredValidator(tools('required'))('', call('{"city":"Oslo"}'))).toEqual({
      valid: true,
      toolCalls: 1,
    });
    expect(createStructuredValidator(tools('required'))('hello', [])).toMatchObject({ problem: 'no-tool-call' });
    expect(createStructuredValidator(tools('auto'))('hello', [])).toEqual({ valid: true, toolCalls: 0 });
    expect(createStructuredValidator(tools('none'))('', call('{}'))).toMatchObject({ problem: 'unexpected-tool-call' });
    expect(createStructuredValidator(tools('required'))('', call('{}', 'other'))).toMatchObject({
      problem: 'unknown-tool',
    });
    expect(createStructuredValidator(tools('required'))('', call('{"city":'))).toMatchObject({
      problem: 'tool-args-not-json',
    });
    expect(createStructuredValidator(tools('required'))('', call('{"city":1}'))).toMatchObject({
      problem: 'tool-args-schema',
    });
  });
});

describe('streamed tool calls', () => {
  const delta = (d: Record<string, unknown>, usage?: number) =>
    JSON.stringify({
      choices: [{ index: 0, delta: d, finish_reason: null }],
      ...(usage ? { usage: { completion_tokens: usage } } : {}),
    });

  it('their deltas are output: the first is the first token, each counts, and the call is put together', () => {
    const acc = new StreamAccumulator({ keepText: true });
    acc.onEvent(delta({ role: 'assistant', content: '' }), 1);
    acc.onEvent(
      delta(
        { tool_calls: [{ index: 0, id: 'c', type: 'function', function: { name: 'get_weather', arguments: '' } }] },
        1,
      ),
      5,
    );
    acc.onEvent(delta({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }, 3), 7);
    acc.onEvent(delta({ tool_calls: [{ index: 0, function: { arguments: '"Oslo"}' } }] }, 5), 9);
    acc.onEvent('[DONE]', 10);
    const r = acc.result();
    expect(r.firstTokenMs).toBe(5);
    expect(r.chunks).toEqual([
      [5, 1],
      [7, 2],
      [9, 2],
    ]);
    expect(r.toolCalls).toEqual([{ name: 'get_weather', arguments: '{"city":"Oslo"}' }]);
  });

  it('a hostile index does not grow the list of calls', () => {
    const acc = new StreamAccumulator({ keepText: true });
    acc.onEvent(delta({ tool_calls: [{ index: 1e9, function: { name: 'x', arguments: '{}' } }] }), 1);
    acc.onEvent('[DONE]', 2);
    expect(acc.result().toolCalls).toBeUndefined();
    expect(acc.result().firstTokenMs).toBe(1);
  });
});
