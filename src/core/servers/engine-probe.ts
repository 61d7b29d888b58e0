import { spawn } from 'node:child_process';
import type { ServerConfig } from '../../shared/config.js';
import { engineFor } from './engines/index.js';
import { classifyLog, installFix } from './failures.js';
import type { ServerFailure } from './types.js';

/** Output of a short command run to completion. */
export interface CaptureResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** Spawn error code (ENOENT: no such interpreter; EACCES: not executable). */
  spawnError?: string;
  timedOut: boolean;
}

/** Runs a command (never through a shell) and collects its output; kills its process group on time-out or abort. */
export function runCapture(
  command: string,
  args: string[],
  options: { env?: NodeJS.ProcessEnv; timeoutMs: number; signal?: AbortSignal },
): Promise<CaptureResult> {
  return new Promise((resolve) => {
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    let settled = false;
    const child = spawn(command, args, { env: options.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const killGroup = (): void => {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, options.timeoutMs);
    const onAbort = (): void => killGroup();
    options.signal?.addEventListener('abort', onAbort, { once: true });
    const finish = (result: Omit<CaptureResult, 'stdout' | 'stderr' | 'timedOut'>): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      killGroup(); // a probe leaves nothing behind
      resolve({ ...result, stdout, stderr, timedOut });
    };
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.once('error', (error: NodeJS.ErrnoException) =>
      finish({ code: null, signal: null, spawnError: error.code ?? 'ERROR' }),
    );
    child.once('close', (code, signal) => finish({ code, signal }));
  });
}

/** What the engine probe found. */
export type EngineProbe =
  | { ok: true; version: string; where: string }
  | { ok: false; failure: Omit<ServerFailure, 'logTail'> & { logTail: string[] } };

const lines = (text: string): string[] => text.split(/\r?\n/).filter((l) => l.trim().length > 0);

/** The interpreter or binary an engine's probe runs (its module says which setting names it); undefined: nothing to probe. */
export function probeCommand(config: ServerConfig): string | undefined {
  const engine = engineFor(config.engine);
  if (!engine.probe || !engine.probeSetting) return undefined;
  const where = (config as Record<string, unknown>)[engine.probeSetting];
  return typeof where === 'string' ? where : undefined;
}

type ProbeOptions = { env?: NodeJS.ProcessEnv; timeoutMs?: number; signal?: AbortSignal; run?: typeof runCapture };

/**
 * Detects an installed engine and its version, as its module says: a Python package
 * (`PYTHON -c "import vllm, sys; print(vllm.__version__)"`) or a binary (`llama-server --version`).
 * A missing interpreter, module or binary becomes an 'engine-missing' failure with the install hint.
 */
export async function probeEngine(config: ServerConfig, options: ProbeOptions = {}): Promise<EngineProbe> {
  const engine = engineFor(config.engine);
  const spec = engine.probe;
  if (!spec) throw new Error(`${engine.description.name} has nothing to probe`);
  const run = options.run ?? runCapture;
  const name = engine.description.name;
  const timeoutMs = options.timeoutMs ?? 120_000;
  const command = probeCommand(config);
  if (command === undefined) throw new Error(`${name} names no interpreter or binary to look up`);
  const args =
    spec.type === 'python' ? ['-c', `import ${spec.pkg}, sys; print(${spec.pkg}.__version__)`] : spec.versionArgs;
  const result = await run(command, args, { env: options.env, timeoutMs, signal: options.signal });
  const output = lines(`${result.stdout}\n${result.stderr}`);
  const check = spec.type === 'python' ? `\`${command} -c "import ${spec.pkg}"\`` : `\`${command} ${args.join(' ')}\``;
  const missing = (message: string, fix: string, logTail: string[] = output.slice(-20)): EngineProbe => ({
    ok: false,
    failure: { kind: 'engine-missing', message, fix, logTail },
  });
  if (result.spawnError) {
    const what = result.spawnError === 'ENOENT' ? 'was not found' : `cannot be run (${result.spawnError})`;
    if (spec.type === 'binary')
      return missing(`${name} is not available: '${command}' ${what}`, installFix(config.engine), []);
    return missing(
      `${name} is not available: the Python interpreter '${command}' ${what}`,
      `pass --python PATH to the interpreter of the venv/conda env that has ${name}, or install Python 3 and run \`${engine.description.install}\``,
      [],
    );
  }
  if (result.timedOut)
    return missing(
      `${name} did not answer ${check} within ${Math.round(timeoutMs / 1000)} s`,
      `check that ${check} works`,
    );
  if (result.code === 0) {
    const version =
      spec.type === 'python'
        ? lines(result.stdout)
            .reverse()
            .find((l) => /^\s*v?\d+\.\d+/.test(l))
            ?.trim()
        : spec.version(`${result.stdout}\n${result.stderr}`);
    if (version) return { ok: true, version, where: command };
  }
  if (spec.type === 'python' && output.some((l) => new RegExp(`No module named '?${spec.pkg}\\b`).test(l)))
    return missing(`${name} is not installed for '${command}'`, installFix(config.engine));
  const known = classifyLog(output, config.engine);
  if (known)
    return {
      ok: false,
      failure: { ...known, message: `${name} cannot be run: ${known.message}`, logTail: output.slice(-20) },
    };
  const last = output.at(-1) ?? `exit code ${result.code}`;
  return missing(
    `${name} does not work with '${command}': ${last}`,
    `run ${check} to see why; ${installFix(config.engine)}`,
  );
}

/** Parses the choice list of `--quantization {a,b,c}` (or `--quantization, -q {a,b,c}`) from an argparse --help text. */
export function parseQuantizationChoices(help: string): string[] | undefined {
  const match =
    help.match(/--quantization(?:\s+|,\s*-q\s+)\{([^}]*)\}/) ?? help.match(/-q\s+\{([^}]*)\},\s*--quantization/);
  if (!match?.[1]) return undefined;
  const choices = match[1]
    .split(',')
    .map((c) => c.trim())
    .filter((c) => c.length > 0 && c !== 'None');
  return choices.length > 0 ? choices : undefined;
}

/** The installed engine's own `PYTHON -m MODULE --help`; undefined when it printed nothing. */
export async function readEngineHelp(
  python: string,
  module: string,
  options: ProbeOptions = {},
): Promise<string | undefined> {
  const run = options.run ?? runCapture;
  const result = await run(python, ['-m', module, '--help'], {
    env: options.env,
    timeoutMs: options.timeoutMs ?? 180_000,
    signal: options.signal,
  });
  const text = `${result.stdout}\n${result.stderr}`;
  return result.code === 0 && text.trim().length > 0 ? text : undefined;
}
