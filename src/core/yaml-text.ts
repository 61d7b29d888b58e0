import { parseDocument } from 'yaml';

const NESTED_TOO_DEEP = 'nested deeper than any servebench file (its parser gave up)';

/**
 * YAML text as a plain value, or one line saying what is wrong (its line and column, without the code frame).
 * A tag the schema does not know (`!!js/function`, `!!python/object`) is refused here: left to the parser it
 * becomes a string and Node prints a six-line warning of its own.
 */
export function parseYamlText(text: string): { value: unknown } | { problem: string } {
  // logLevel 'silent': the parser's warnings come back here as data and are said in our one line, not by Node.
  let doc: ReturnType<typeof parseDocument>;
  try {
    doc = parseDocument(text, { logLevel: 'silent' });
  } catch (error) {
    // The parser recurses per level of nesting: thousands of levels overflow its stack, which is no config either.
    if (error instanceof RangeError) return { problem: NESTED_TOO_DEEP };
    throw error;
  }
  const first = doc.errors[0] ?? doc.warnings.find((w) => w.code === 'TAG_RESOLVE_FAILED');
  if (first) {
    const at = first.linePos?.[0] ? ` at line ${first.linePos[0].line}, column ${first.linePos[0].col}` : '';
    const message = (first.message.split('\n')[0] ?? '')
      .replace(/ at line \d+, column \d+:?$/, '')
      .replace(/:\s*$/, '');
    if (/call stack/i.test(message)) return { problem: `${NESTED_TOO_DEEP}${at}` };
    const tag = /^Unresolved tag: (.+)$/.exec(message)?.[1]?.replace(/^tag:yaml\.org,2002:/, '!!');
    return {
      problem: tag
        ? `the tag ${tag}${at} is not supported: write plain values (YAML tags run nothing here)`
        : `${message}${at}`,
    };
  }
  try {
    return { value: doc.toJS() };
  } catch (error) {
    if (error instanceof RangeError) return { problem: NESTED_TOO_DEEP };
    // An alias bomb or an alias to nothing: the library refuses it while building the value.
    return { problem: (error as Error).message.split('\n')[0] ?? 'not valid YAML' };
  }
}
