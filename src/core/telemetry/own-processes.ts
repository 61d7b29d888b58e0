import { readFileSync } from 'node:fs';

/** The parent pid of a process (Linux /proc), or null when unknown. */
function linuxParentPid(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // "pid (comm) state ppid ...": comm may contain spaces and parentheses; ppid follows the last ')'.
    const after = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ppid = Number(after[1]);
    return Number.isInteger(ppid) && ppid > 0 ? ppid : null;
  } catch {
    return null;
  }
}

/**
 * True when pid is one of `own` or a descendant of one (vLLM and SGLang fork workers that hold
 * GPU memory themselves): those are the engine under test, not "other" processes.
 */
export function isOwnProcess(
  pid: number,
  own: ReadonlySet<number>,
  parentPid: (pid: number) => number | null = linuxParentPid,
): boolean {
  let current: number | null = pid;
  for (let depth = 0; current !== null && current > 1 && depth < 32; depth++) {
    if (own.has(current)) return true;
    current = parentPid(current);
  }
  return false;
}
