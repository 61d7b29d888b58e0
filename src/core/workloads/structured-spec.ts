import { readFile } from 'node:fs/promises';
import type { BenchConfig } from '../../shared/config.js';
import { parseResponseFormat, TOOL_CHOICE_MODES } from '../../shared/structured-output.js';
import { UserError } from '../errors.js';
import { compileSchema } from '../load/structured-validate.js';

/** A JSON Schema as read from its file (an object; its keywords are the validator's business). */
export type JsonSchema = Record<string, unknown>;

/** What every answer must be: JSON of a schema, a full match of a regex, or one of a few choices. */
export type OutputFormat =
  | { kind: 'json-schema'; schema: JsonSchema; file: string }
  | { kind: 'regex'; pattern: string }
  | { kind: 'choice'; choices: string[] };

/** One function of --tools: its name and its parameters schema (absent: any arguments object). */
interface ToolFunction {
  name: string;
  parameters?: JsonSchema;
}

/** The tools every request offers, as sent, and what --tool-choice asks of the answer. */
export interface ToolSpec {
  /** The file's list, sent as it is. */
  list: unknown[];
  functions: ToolFunction[];
  /** auto, required, none, or a function's name. */
  choice: string;
}

/** The run's structured-output asks: at most one of an output format and tools. */
export interface StructuredSpec {
  format: OutputFormat | null;
  tools: ToolSpec | null;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

async function readJson(flag: string, file: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    throw new UserError(
      `${flag} ${file}: cannot read it (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`,
    );
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    throw new UserError(`${flag} ${file}: not JSON (${(e as Error).message})`);
  }
}

function checkSchema(flag: string, where: string, schema: unknown): JsonSchema {
  if (!isObject(schema)) throw new UserError(`${flag} ${where}: the schema must be a JSON object`);
  const compiled = compileSchema(schema);
  if (!compiled.ok) throw new UserError(`${flag} ${where}: not a JSON Schema servebench can check (${compiled.error})`);
  return schema;
}

async function readFormat(text: string): Promise<OutputFormat> {
  const parsed = parseResponseFormat(text);
  if (!parsed.ok) throw new UserError(`--response-format ${parsed.error}`);
  const spec = parsed.spec;
  if (spec.kind !== 'json-schema') return spec;
  const schema = checkSchema(
    '--response-format json-schema=',
    spec.file,
    await readJson('--response-format', spec.file),
  );
  return { kind: 'json-schema', schema, file: spec.file };
}

function toolFunction(file: string, tool: unknown, i: number): ToolFunction {
  const fn = isObject(tool) ? tool.function : undefined;
  if (!isObject(tool) || tool.type !== 'function' || !isObject(fn) || typeof fn.name !== 'string' || fn.name === '')
    throw new UserError(`--tools ${file}: tool ${i + 1} is not {"type": "function", "function": {"name": ...}}`);
  if (fn.parameters === undefined) return { name: fn.name };
  return { name: fn.name, parameters: checkSchema('--tools', `${file} (${fn.name}'s parameters)`, fn.parameters) };
}

async function readTools(file: string, choice: string): Promise<ToolSpec> {
  const json = await readJson('--tools', file);
  const list = Array.isArray(json) ? json : isObject(json) && Array.isArray(json.tools) ? json.tools : null;
  if (!list || list.length === 0) throw new UserError(`--tools ${file}: must be a non-empty JSON list of tools`);
  const functions = list.map((t, i) => toolFunction(file, t, i));
  const named = !(TOOL_CHOICE_MODES as readonly string[]).includes(choice);
  if (named && !functions.some((f) => f.name === choice))
    throw new UserError(
      `--tool-choice ${choice}: no tool of ${file} has that name (${functions.map((f) => f.name).join(', ')}); or pass ${TOOL_CHOICE_MODES.join(', ')}`,
    );
  return { list, functions, choice };
}

/** One line when the structured-output settings do not fit the rest of the run; null when they do. */
function structuredProblem(config: BenchConfig): string | null {
  const { responseFormat, tools, toolChoice, api } = config;
  if (toolChoice !== undefined && tools === undefined)
    return '--tool-choice applies to --tools FILE: add --tools or drop it';
  if (responseFormat !== undefined && tools !== undefined)
    return '--response-format and --tools each say what the answer is: pass one of them';
  if (responseFormat !== undefined && api !== 'chat' && api !== 'completions')
    return `--response-format applies to --api chat or completions: drop it, or pick one (not ${api})`;
  if (tools !== undefined && api !== 'chat') return `--tools applies to --api chat: drop it, or pick chat (not ${api})`;
  if (tools !== undefined && (config.turns ?? 1) > 1)
    return '--tools answers with calls, which a conversation cannot send back as its next turn: drop --turns';
  return null;
}

/** Reads the schema or tools files and checks them, before any run folder exists; null when neither is asked. */
export async function loadStructured(config: BenchConfig): Promise<StructuredSpec | null> {
  const problem = structuredProblem(config);
  if (problem) throw new UserError(problem);
  if (config.responseFormat !== undefined) return { format: await readFormat(config.responseFormat), tools: null };
  if (config.tools !== undefined)
    return { format: null, tools: await readTools(config.tools, config.toolChoice ?? 'required') };
  return null;
}
