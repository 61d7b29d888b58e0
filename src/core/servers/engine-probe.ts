import { spawn } from 'node:child_process';
import type { EngineKind } from '../../shared/config.js';
import { classifyLog, installFix, pipInstallCommand } from './failures.js';
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
  { ok: true; version: string } | { ok: false; failure: Omit<ServerFailure, 'logTail'> & { logTail: string[] } };

const lines = (text: string): string[] => text.split(/\r?\n/).filter((l) => l.trim().length > 0);

/**
 * Detects an installed engine: `PYTHON -c "import vllm, sys; print(vllm.__version__)"`.
 * A missing interpreter or module becomes an 'engine-missing' failure with the install command.
 */
export async function probeEngine(
  python: string,
  engine: Extract<EngineKind, 'vllm' | 'sglang'>,
  options: { env?: NodeJS.ProcessEnv; timeoutMs?: number; signal?: AbortSignal; run?: typeof runCapture } = {},
): Promise<EngineProbe> {
  const run = options.run ?? runCapture;
  const pkg = engine;
  const name = engine === 'vllm' ? 'vLLM' : 'SGLang';
  const result = await run(python, ['-c', `import ${pkg}, sys; print(${pkg}.__version__)`], {
    env: options.env,
    timeoutMs: options.timeoutMs ?? 120_000,
    signal: options.signal,
  });
  const output = lines(`${result.stdout}\n${result.stderr}`);
  if (result.spawnError) {
    const what = result.spawnError === 'ENOENT' ? 'was not found' : `cannot be run (${result.spawnError})`;
    return {
      ok: false,
      failure: {
        kind: 'engine-missing',
        message: `${name} is not available: the Python interpreter '${python}' ${what}`,
        fix: `pass --python PATH to the interpreter of the venv/conda env that has ${name}, or install Python 3 and run \`${pipInstallCommand(engine)}\``,
        logTail: [],
      },
    };
  }
  if (result.timedOut) {
    return {
      ok: false,
      failure: {
        kind: 'engine-missing',
        message: `${name} did not finish importing within ${Math.round((options.timeoutMs ?? 120_000) / 1000)} s ('${python}')`,
        fix: `check that \`${python} -c "import ${pkg}"\` works`,
        logTail: output.slice(-20),
      },
    };
  }
  if (result.code === 0) {
    const version = lines(result.stdout)
      .reverse()
      .find((l) => /^\s*v?\d+\.\d+/.test(l))
      ?.trim();
    if (version) return { ok: true, version };
  }
  const missingModule = output.some((l) => new RegExp(`No module named '?${pkg}\\b`).test(l));
  if (missingModule) {
    return {
      ok: false,
      failure: {
        kind: 'engine-missing',
        message: `${name} is not installed for '${python}'`,
        fix: installFix(engine),
        logTail: output.slice(-20),
      },
    };
  }
  const known = classifyLog(output, engine);
  if (known)
    return {
      ok: false,
      failure: { ...known, message: `${name} cannot be imported: ${known.message}`, logTail: output.slice(-20) },
    };
  const last = output.at(-1) ?? `exit code ${result.code}`;
  return {
    ok: false,
    failure: {
      kind: 'engine-missing',
      message: `${name} cannot be imported with '${python}': ${last}`,
      fix: `run \`${python} -c "import ${pkg}"\` to see why; ${installFix(engine)}`,
      logTail: output.slice(-20),
    },
  };
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

/** Reads the quantization methods the installed engine accepts from its own `--help`; undefined when unreadable. */
export async function probeQuantizationChoices(
  python: string,
  module: string,
  options: { env?: NodeJS.ProcessEnv; timeoutMs?: number; signal?: AbortSignal; run?: typeof runCapture } = {},
): Promise<string[] | undefined> {
  const run = options.run ?? runCapture;
  const result = await run(python, ['-m', module, '--help'], {
    env: options.env,
    timeoutMs: options.timeoutMs ?? 180_000,
    signal: options.signal,
  });
  return parseQuantizationChoices(`${result.stdout}\n${result.stderr}`);
}
