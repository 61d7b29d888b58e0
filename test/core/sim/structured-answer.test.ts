import { describe, expect, it } from 'vitest';
import { compileSchema } from '../../../src/core/load/structured-validate.js';
import { sampleJson, sampleRegex } from '../../../src/core/sim/schema-sample.js';
import { constraintOf, simAnswer } from '../../../src/core/sim/structured-answer.js';

describe("the simulator's structured answers", () => {
  it('a sampled value is accepted by its schema, for each supported keyword', () => {
    const schemas = [
      {
        type: 'object',
        properties: { a: { type: 'integer', minimum: 5, maximum: 9 }, b: { enum: ['x', 'y'] } },
        required: ['a', 'b'],
        additionalProperties: false,
      },
      { type: 'array', items: { type: 'number', exclusiveMinimum: 0 }, minItems: 3 },
      { type: 'string', minLength: 20, maxLength: 25 },
      { anyOf: [{ type: 'boolean' }, { type: 'null' }] },
      { type: 'object', properties: { id: { type: 'string', pattern: '^[a-f]{4}$' }, n: { const: 3 } } },
    ];
    for (const schema of schemas) {
      const compiled = compileSchema(schema);
      if (!compiled.ok) throw new Error(compiled.error);
      for (const seed of [0, 1, 7])
        expect(compiled.validate(sampleJson(schema, seed)), JSON.stringify(schema)).toBe(true);
    }
  });

  it('a sampled string fully matches its pattern; a pattern outside the subset gives null', () => {
    for (const p of ['[A-Z]{3}-\\d{4}', '(yes|no)', 'ab+c?d*', '\\w+@\\w+\\.com'])
      expect(new RegExp(`^(?:${p})$`).test(sampleRegex(p) ?? '\u0000'), p).toBe(true);
    expect(sampleRegex('[^a]')).toBeNull();
  });

  it('reads each engine dialect of the constraint, and answers a tool call with arguments of its parameters', () => {
    expect(constraintOf({ structured_outputs: { choice: ['a'] } })).toEqual({ kind: 'choice', choices: ['a'] });
    expect(constraintOf({ regex: 'x' })).toEqual({ kind: 'regex', pattern: 'x' });
    expect(constraintOf({ grammar: 'root ::= "a" | "b"' })).toEqual({ kind: 'choice', choices: ['a', 'b'] });
    expect(constraintOf({ tools: [{ type: 'function', function: { name: 'f' } }], tool_choice: 'none' })).toBeNull();
    const tool = constraintOf({
      tools: [
        {
          type: 'function',
          function: { name: 'f', parameters: { type: 'object', properties: { q: { type: 'string' } } } },
        },
      ],
    });
    const answer = simAnswer(tool!, 0);
    expect(answer).toMatchObject({ kind: 'tool', name: 'f' });
    expect(JSON.parse((answer as { arguments: string }).arguments)).toHaveProperty('q');
  });
});
