import { Ajv, type ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { StructuredProblem, StructuredVerdict } from '../../shared/request-record.js';
import type { JsonSchema, OutputFormat, StructuredSpec, ToolSpec } from '../workloads/structured-spec.js';
import type { StreamToolCall } from './stream-accumulator.js';

/** Most characters of an answer quoted in a verdict's detail. */
const DETAIL_CHARS = 200;

// strict off: a schema written for a server may carry keywords (title, examples, x-*) the validator need not know.
const draft7 = new Ajv({ strict: false, allErrors: false });
const draft2020 = new Ajv2020({ strict: false, allErrors: false });

/** Compiles a JSON Schema (draft-07, or 2020-12 where its $schema says so); an error line when it is none. */
export function compileSchema(
  schema: JsonSchema,
): { ok: true; validate: ValidateFunction } | { ok: false; error: string } {
  const ajv = typeof schema.$schema === 'string' && schema.$schema.includes('2020-12') ? draft2020 : draft7;
  try {
    return { ok: true, validate: ajv.compile(schema) };
  } catch (e) {
    return { ok: false, error: (e as Error).message };
  }
}

const quote = (text: string): string => {
  const t = text.length > DETAIL_CHARS ? `${text.slice(0, DETAIL_CHARS)}…` : text;
  return JSON.stringify(t);
};

const bad = (problem: StructuredProblem, detail: string, toolCalls?: number): StructuredVerdict => ({
  valid: false,
  problem,
  detail,
  ...(toolCalls !== undefined ? { toolCalls } : {}),
});

function schemaError(validate: ValidateFunction): string {
  const e = validate.errors?.[0];
  if (!e) return 'does not match the schema';
  return `${e.instancePath === '' ? '(root)' : e.instancePath}: ${e.message ?? 'does not match'}`;
}

/** JSON text against a compiled schema. */
function checkJson(text: string, validate: ValidateFunction, notJson: StructuredProblem, mismatch: StructuredProblem) {
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch {
    return bad(notJson, `not JSON: ${quote(text)}`);
  }
  return validate(value) ? null : bad(mismatch, schemaError(validate));
}

type Check = (text: string, calls: readonly StreamToolCall[]) => StructuredVerdict;

function formatCheck(format: OutputFormat): Check {
  if (format.kind === 'json-schema') {
    const compiled = compileSchema(format.schema);
    if (!compiled.ok) throw new Error(`schema compiled at load but not now: ${compiled.error}`);
    return (text) => checkJson(text, compiled.validate, 'not-json', 'schema') ?? { valid: true };
  }
  if (format.kind === 'regex') {
    // A full match, as the servers' guided decoding constrains the whole output.
    const re = new RegExp(`^(?:${format.pattern})$`, 'u');
    return (text) => (re.test(text) ? { valid: true } : bad('regex', `no full match: ${quote(text)}`));
  }
  const choices = new Set(format.choices);
  return (text) => (choices.has(text) ? { valid: true } : bad('choice', `not one of the choices: ${quote(text)}`));
}

function toolsCheck(tools: ToolSpec): Check {
  const byName = new Map(
    tools.functions.map((f) => {
      const compiled = f.parameters ? compileSchema(f.parameters) : null;
      return [f.name, compiled?.ok ? compiled.validate : null] as const;
    }),
  );
  const mustCall = tools.choice !== 'auto' && tools.choice !== 'none';
  return (text, calls) => {
    const n = calls.length;
    if (n === 0) {
      return mustCall
        ? bad('no-tool-call', `tool choice ${tools.choice} but the answer made no call: ${quote(text)}`, 0)
        : { valid: true, toolCalls: 0 };
    }
    if (tools.choice === 'none') return bad('unexpected-tool-call', `tool choice none but ${n} call(s) came`, n);
    for (const call of calls) {
      const wanted = mustCall && tools.choice !== 'required' ? tools.choice : null;
      if (!byName.has(call.name) || (wanted !== null && call.name !== wanted))
        return bad('unknown-tool', `called ${quote(call.name)}, not ${wanted ?? 'a tool of --tools'}`, n);
      const validate = byName.get(call.name);
      const args = validate
        ? checkJson(call.arguments, validate, 'tool-args-not-json', 'tool-args-schema')
        : checkJson(call.arguments, draft7.compile({ type: 'object' }), 'tool-args-not-json', 'tool-args-schema');
      if (args) return { ...args, detail: `${call.name}: ${args.detail ?? ''}`, toolCalls: n };
    }
    return { valid: true, toolCalls: n };
  };
}

/** The check of one answer against the run's structured-output ask: its text and its streamed tool calls. */
export function createStructuredValidator(spec: StructuredSpec): Check {
  if (spec.format) return formatCheck(spec.format);
  if (spec.tools) return toolsCheck(spec.tools);
  return () => ({ valid: true });
}
