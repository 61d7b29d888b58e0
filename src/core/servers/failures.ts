import type { EngineKind } from '../../shared/config.js';
import { fieldByServerKey } from '../../shared/fields.js';
import { commonFailures, pythonInstallFix } from './engines/common.js';
import { engineFor } from './engines/index.js';
import type { FailurePattern } from './engines/types.js';
import type { ServerFailure } from './types.js';

const patternsOf = (engine: EngineKind): FailurePattern[] => {
  const e = engineFor(engine);
  return [...e.failures, ...commonFailures({ name: e.description.name, memoryHint: e.memoryHint })];
};

/** The install fix of an engine (the pip command and --python for Python engines). */
export function installFix(engine: EngineKind): string {
  const e = engineFor(engine);
  if (e.probe?.type === 'python') return pythonInstallFix(e.description.install);
  const where = e.probeSetting ? fieldByServerKey(e.probeSetting) : undefined;
  if (e.probe?.type === 'binary' && where)
    return `install it (${e.description.install}), or pass --${where.flag} ${where.metavar}`;
  return e.description.install;
}

/** Classifies a failure from the engine's log lines (its own patterns, then the common ones); undefined when none matches. */
export function classifyLog(lines: readonly string[], engine: EngineKind): Omit<ServerFailure, 'logTail'> | undefined {
  for (const p of patternsOf(engine)) {
    for (const line of lines) {
      const match = line.match(p.pattern);
      if (match) return { kind: p.kind, message: p.message(match), fix: p.fix(match) };
    }
  }
  return undefined;
}

/** A failure for a server process that exited: classified from the log, else crashed/unknown with the last lines. */
export function failureFromExit(
  engine: EngineKind,
  lines: readonly string[],
  exit: { code: number | null; signal: NodeJS.Signals | null },
  phase: 'start' | 'run',
  tailLines = 30,
): ServerFailure {
  const logTail = lines.slice(-tailLines);
  const known = classifyLog(lines, engine);
  const how = exit.signal ? `was killed by ${exit.signal}` : `exited with code ${exit.code ?? '?'}`;
  if (known) return { ...known, message: `${known.message} (the server ${how})`, logTail };
  const last = [...lines]
    .reverse()
    .find((l) => l.trim().length > 0)
    ?.trim();
  const detail = last ? `; last line: ${last.length > 200 ? `${last.slice(0, 200)}...` : last}` : '';
  const e = engineFor(engine);
  const name = e.anonymous ? 'the server' : e.description.name;
  return {
    kind: phase === 'run' ? 'crashed' : 'unknown',
    message: `${name} ${how} ${phase === 'run' ? 'while serving' : 'during start-up'}${detail}`,
    fix: 'read the end of server.log in the run folder for the cause',
    logTail,
  };
}
