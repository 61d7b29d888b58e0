/** node:util's parse errors for `servebench COMMAND`, reworded into one line that names the fix. */
export function argsErrorLine(error: Error, command: string): string {
  const first = error.message.split('\n')[0] ?? '';
  const ambiguous = first.match(/^Option '(--[^']+)' argument is ambiguous/);
  if (ambiguous) {
    return `${ambiguous[1]} got no value, or one that starts with '-': write ${ambiguous[1]}=VALUE (negative values are never valid here)`;
  }
  const missing = first.match(/^Option '(--[^' ]+)[^']*' argument missing/);
  if (missing) return `${missing[1]} needs a value (see 'servebench ${command} --help')`;
  return `${first.replace(/\.$/, '')} (see 'servebench ${command} --help')`;
}

/** True when the command line asks for help (`--help` or `-h` anywhere, before `--`): help wins over a bad flag. */
export function helpAsked(argv: readonly string[]): boolean {
  const end = argv.indexOf('--');
  return (end < 0 ? argv : argv.slice(0, end)).some((a) => a === '--help' || a === '-h');
}
