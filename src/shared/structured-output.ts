/**
 * Structured output, declared once: what `--response-format` and `--tool-choice` take, parsed the same way by the
 * config, the CLI and the app. `json-schema=FILE` (a JSON Schema file), `regex=PATTERN` (the whole output matches)
 * or `choice=A,B,C` (the output is exactly one of them).
 */
export type ResponseFormatSpec =
  { kind: 'json-schema'; file: string } | { kind: 'regex'; pattern: string } | { kind: 'choice'; choices: string[] };

/** The kinds `--response-format` takes, in the order its help names them. */
const RESPONSE_FORMAT_KINDS = ['json-schema', 'regex', 'choice'] as const;

/** `--tool-choice`'s fixed values; anything else names one function of `--tools`. */
export const TOOL_CHOICE_MODES = ['auto', 'required', 'none'] as const;

/** Parses `--response-format KIND=VALUE`; an error line names what is wrong. */
export function parseResponseFormat(
  text: string,
): { ok: true; spec: ResponseFormatSpec } | { ok: false; error: string } {
  const eq = text.indexOf('=');
  const kind = eq < 0 ? text : text.slice(0, eq);
  const value = eq < 0 ? '' : text.slice(eq + 1);
  const forms = 'json-schema=FILE, regex=PATTERN or choice=A,B';
  if (!(RESPONSE_FORMAT_KINDS as readonly string[]).includes(kind))
    return { ok: false, error: `must be ${forms}; "${kind}" is none of them` };
  if (value === '') return { ok: false, error: `${kind}= needs a value (${forms})` };
  if (kind === 'json-schema') return { ok: true, spec: { kind, file: value } };
  if (kind === 'regex') {
    try {
      new RegExp(value, 'u');
    } catch (e) {
      return { ok: false, error: `regex=${value} is no regular expression: ${(e as Error).message}` };
    }
    return { ok: true, spec: { kind, pattern: value } };
  }
  const choices = value.split(',').filter((c) => c.length > 0);
  if (choices.length < 1) return { ok: false, error: 'choice= needs at least one choice, comma-separated' };
  return { ok: true, spec: { kind: 'choice', choices } };
}

/** The run's structured-output ask in the words of its flags (checks quote it); null when it asks none. */
export function structuredAskText(c: { responseFormat?: string; tools?: string; toolChoice?: string }): string | null {
  if (c.responseFormat !== undefined) return `--response-format ${c.responseFormat}`;
  if (c.tools !== undefined) return `--tools ${c.tools} --tool-choice ${c.toolChoice ?? 'required'}`;
  return null;
}

/** `--tool-choice` as the request carries it: a mode, or the one function the model must call. */
export function toolChoiceBody(choice: string): string | { type: 'function'; function: { name: string } } {
  return (TOOL_CHOICE_MODES as readonly string[]).includes(choice)
    ? choice
    : { type: 'function', function: { name: choice } };
}
