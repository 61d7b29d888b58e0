import { toolChoiceBody } from '../../shared/structured-output.js';
import type { StructuredSpec } from '../workloads/structured-spec.js';

/** A regex source matching exactly one of the literal choices (SGLang has no choice parameter). */
export function choiceRegex(choices: readonly string[]): string {
  return `(${choices.map((c) => c.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&')).join('|')})`;
}

/** A GBNF grammar of exactly one of the choices (llama.cpp's `grammar`). */
function choiceGrammar(choices: readonly string[]): string {
  return `root ::= ${choices.map((c) => JSON.stringify(c)).join(' | ')}`;
}

/**
 * The fields a chat or completions body carries for --response-format or --tools, so that each engine reads its own
 * and ignores the others' (all three take unknown fields):
 * - a JSON Schema goes as OpenAI's `response_format: {type: json_schema, json_schema: {name, schema}}`, which vLLM
 *   (ResponseFormat), SGLang and llama.cpp (oaicompat json_schema) all read;
 * - a regex as vLLM's `structured_outputs.regex` and SGLang's top-level `regex` (llama.cpp has no regex constraint);
 * - choices as vLLM's `structured_outputs.choice`, SGLang's `regex` of the alternatives and llama.cpp's GBNF `grammar`;
 * - tools as OpenAI's `tools` and `tool_choice` (a function's name becomes {type: function, function: {name}}).
 * vLLM's older `guided_*` aliases are not sent: vLLM refuses them together with `structured_outputs`.
 */
export function structuredFields(spec: StructuredSpec): Record<string, unknown> {
  const f = spec.format;
  if (f?.kind === 'json-schema')
    return { response_format: { type: 'json_schema', json_schema: { name: 'servebench', schema: f.schema } } };
  if (f?.kind === 'regex') return { structured_outputs: { regex: f.pattern }, regex: f.pattern };
  if (f?.kind === 'choice')
    return {
      structured_outputs: { choice: f.choices },
      regex: choiceRegex(f.choices),
      grammar: choiceGrammar(f.choices),
    };
  if (spec.tools) return { tools: spec.tools.list, tool_choice: toolChoiceBody(spec.tools.choice) };
  return {};
}
