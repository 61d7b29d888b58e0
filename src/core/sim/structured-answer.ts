import { sampleJson, sampleRegex } from './schema-sample.js';

/** What a request constrains its answer to, as the simulator read it from the body. */
export type SimConstraint =
  | { kind: 'json'; schema: unknown }
  | { kind: 'regex'; pattern: string }
  | { kind: 'choice'; choices: string[] }
  | { kind: 'tool'; name: string; parameters: unknown };

/** The simulator's constrained answer: text, or one tool call (its arguments streamed as they are generated). */
export type SimAnswer = { kind: 'text'; text: string } | { kind: 'tool'; name: string; arguments: string };

type Body = Record<string, unknown>;
const isObject = (v: unknown): v is Body => typeof v === 'object' && v !== null && !Array.isArray(v);
const strings = (v: unknown): string[] | null =>
  Array.isArray(v) && v.length > 0 && v.every((c) => typeof c === 'string') ? (v as string[]) : null;

/** tools + tool_choice (OpenAI): the function to call, or null for tool_choice none or no tools. */
function toolConstraint(body: Body): SimConstraint | null {
  const tools = Array.isArray(body.tools) ? body.tools.filter(isObject) : [];
  if (tools.length === 0 || body.tool_choice === 'none') return null;
  const choice = body.tool_choice;
  const wanted = isObject(choice) && isObject(choice.function) ? choice.function.name : null;
  const fns = tools.map((t) => (isObject(t.function) ? t.function : {}));
  const fn = fns.find((f) => wanted === null || f.name === wanted) ?? fns[0]!;
  return { kind: 'tool', name: typeof fn.name === 'string' ? fn.name : 'tool', parameters: fn.parameters ?? {} };
}

/** vLLM's structured_outputs (and its older guided_* aliases), SGLang's regex/json_schema, llama.cpp's json_schema/grammar. */
function extraConstraint(body: Body): SimConstraint | null {
  const so = isObject(body.structured_outputs) ? body.structured_outputs : {};
  const json = so.json ?? body.guided_json ?? body.json_schema;
  if (json !== undefined)
    return { kind: 'json', schema: typeof json === 'string' ? (JSON.parse(json) as unknown) : json };
  const choices = strings(so.choice) ?? strings(body.guided_choice);
  if (choices) return { kind: 'choice', choices };
  const regex = so.regex ?? body.guided_regex ?? body.regex;
  if (typeof regex === 'string') return { kind: 'regex', pattern: regex };
  // llama.cpp's GBNF, for the one shape servebench sends: root ::= "a" | "b".
  if (typeof body.grammar === 'string') {
    const m = /^root ::= (.+)$/.exec(body.grammar);
    const alts = m?.[1]?.split(' | ').map((a) => JSON.parse(a) as unknown);
    if (alts && alts.every((a) => typeof a === 'string')) return { kind: 'choice', choices: alts as string[] };
  }
  return null;
}

/** The constraint a chat or completions body asks for; null for free text. */
export function constraintOf(body: Body): SimConstraint | null {
  const tool = toolConstraint(body);
  if (tool) return tool;
  const rf = isObject(body.response_format) ? body.response_format : null;
  if (rf?.type === 'json_schema' && isObject(rf.json_schema))
    return { kind: 'json', schema: rf.json_schema.schema ?? {} };
  if (rf?.type === 'json_object') return { kind: 'json', schema: { type: 'object' } };
  return extraConstraint(body);
}

/** The answer to a constraint, varied by `seed`; null where the simulator cannot meet it (it then answers free text). */
export function simAnswer(c: SimConstraint, seed: number): SimAnswer | null {
  if (c.kind === 'tool') {
    const args = sampleJson(c.parameters, seed);
    return args === undefined ? null : { kind: 'tool', name: c.name, arguments: JSON.stringify(args) };
  }
  if (c.kind === 'json') {
    const value = sampleJson(c.schema, seed);
    return value === undefined ? null : { kind: 'text', text: JSON.stringify(value) };
  }
  if (c.kind === 'choice') return { kind: 'text', text: c.choices[seed % c.choices.length]! };
  const text = sampleRegex(c.pattern, seed);
  return text === null ? null : { kind: 'text', text };
}

/** Characters per simulated token of a structured answer: about what a BPE tokenizer gives JSON. */
const CHARS_PER_TOKEN = 3;

/** The answer cut into its tokens, in order. */
export function answerPieces(text: string): string[] {
  const pieces: string[] = [];
  for (let i = 0; i < text.length; i += CHARS_PER_TOKEN) pieces.push(text.slice(i, i + CHARS_PER_TOKEN));
  return pieces.length > 0 ? pieces : [''];
}
