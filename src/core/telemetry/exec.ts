import { createInterface } from 'node:readline';
import { execa } from 'execa';

/** What a finished command printed. `notFound` is set when the binary could not be started at all. */
export interface ExecResult {
  exitCode: number | null;
  stdout: string;
  stderr: string;
  notFound?: boolean;
}

/** A long-running child whose stdout is consumed line by line. */
export interface LineProcess {
  /** Resolves once the child has exited (by itself or after stop()). */
  readonly exited: Promise<ExecResult>;
  /** Ends the child (SIGTERM, then SIGKILL) and waits for it. Idempotent. */
  stop(): Promise<void>;
}

/** Runs commands for the nvidia-smi source; tests pass fakes, production uses execa. */
export interface CommandRunner {
  run(file: string, args: string[], options?: { timeoutMs?: number; env?: NodeJS.ProcessEnv }): Promise<ExecResult>;
  /** Starts a child and calls onLine for every stdout line as it arrives (streamed, not buffered). */
  spawnLines(
    file: string,
    args: string[],
    onLine: (line: string) => void,
    options?: { env?: NodeJS.ProcessEnv },
  ): LineProcess;
}

function isNotFound(error: unknown): boolean {
  const code = (error as { code?: string } | undefined)?.code;
  return code === 'ENOENT' || code === 'EACCES';
}

/** The real runner, on execa: no shell, never rejects (a failed command is data). */
export function createExecaRunner(): CommandRunner {
  return {
    async run(file, args, options = {}) {
      const result = await execa(file, args, {
        reject: false,
        timeout: options.timeoutMs ?? 15_000,
        env: options.env,
        extendEnv: true,
        stdin: 'ignore',
        stripFinalNewline: false,
      });
      const cause = (result as { cause?: unknown }).cause;
      return {
        exitCode: result.exitCode ?? null,
        stdout: typeof result.stdout === 'string' ? result.stdout : '',
        stderr: typeof result.stderr === 'string' ? result.stderr : cause instanceof Error ? cause.message : '',
        ...(isNotFound(cause) ? { notFound: true } : {}),
      };
    },
    spawnLines(file, args, onLine, options = {}) {
      const child = execa(file, args, {
        reject: false,
        buffer: { stdout: false, stderr: true },
        env: options.env,
        extendEnv: true,
        stdin: 'ignore',
        forceKillAfterDelay: 2_000,
      });
      if (child.stdout) {
        const rl = createInterface({ input: child.stdout, crlfDelay: Infinity });
        rl.on('line', onLine);
      }
      const exited: Promise<ExecResult> = child.then(
        (result) => {
          const cause = (result as { cause?: unknown }).cause;
          return {
            exitCode: result.exitCode ?? null,
            stdout: '',
            stderr: typeof result.stderr === 'string' ? result.stderr : cause instanceof Error ? cause.message : '',
            ...(isNotFound(cause) ? { notFound: true } : {}),
          };
        },
        (error: unknown) => ({
          exitCode: null,
          stdout: '',
          stderr: error instanceof Error ? error.message : String(error),
        }),
      );
      let stopping: Promise<void> | null = null;
      return {
        exited,
        stop() {
          stopping ??= (async () => {
            if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
            await exited;
          })();
          return stopping;
        },
      };
    },
  };
}
