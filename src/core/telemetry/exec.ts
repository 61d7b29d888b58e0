import { execa } from 'execa';

/** What a finished command printed. `notFound` is set when the binary could not be started at all. */
export interface ExecResult {
  exitCode: number | null;
  stdout: string;
  stderr: string;
  notFound?: boolean;
  /** It gave no complete answer within the time-out (it was killed, or abandoned if it would not die). */
  timedOut?: boolean;
  /** It printed more than the output cap (and was killed). */
  tooLarge?: boolean;
  /** The caller's signal ended it (Ctrl-C). */
  aborted?: boolean;
}

/** A long-running child whose stdout is consumed line by line. */
export interface LineProcess {
  /** Resolves once the child has exited (by itself or after stop()). */
  readonly exited: Promise<ExecResult>;
  /** Ends the child (SIGTERM, then SIGKILL) and waits for it, never longer than a few seconds. Idempotent. */
  stop(): Promise<void>;
}

/** Options of one bounded command. */
interface RunOptions {
  /** Whole-answer time-out (default 15 s). */
  timeoutMs?: number;
  env?: NodeJS.ProcessEnv;
  /** Most characters of stdout or stderr kept (default 1 MiB): past it the child is killed. */
  maxChars?: number;
  /** Ends the child at once (Ctrl-C); the result says aborted. */
  signal?: AbortSignal;
}

/** Options of a line-streaming child. */
interface SpawnLinesOptions {
  env?: NodeJS.ProcessEnv;
  /** Longest line passed on (default 16 KiB): the rest of a longer one is dropped, and onOverlong says so. */
  maxLineChars?: number;
  /** Every chunk's size as it arrives, before it is split (a flood is seen in bytes, lines or none). */
  onBytes?: (bytes: number) => void;
  /** A line longer than maxLineChars was cut. */
  onOverlong?: () => void;
}

/** Runs commands for the nvidia-smi source; tests pass fakes, production uses execa. */
export interface CommandRunner {
  run(file: string, args: string[], options?: RunOptions): Promise<ExecResult>;
  /** Starts a child and calls onLine for every stdout line as it arrives (streamed, not buffered). */
  spawnLines(file: string, args: string[], onLine: (line: string) => void, options?: SpawnLinesOptions): LineProcess;
}

/** Output kept of one command by default: a query for many GPUs is a few KB. */
const DEFAULT_MAX_OUTPUT_CHARS = 1 << 20;
/** Longest stdout line passed on by default: an nvidia-smi CSV row is a few hundred characters. */
const DEFAULT_MAX_LINE_CHARS = 16 << 10;
/** After SIGTERM, SIGKILL follows this late; a child that outlives even that (stuck in the driver) is abandoned. */
const KILL_GRACE_MS = 1_000;
const ABANDON_AFTER_MS = 3_000;

function isNotFound(error: unknown): boolean {
  const code = (error as { code?: string } | undefined)?.code;
  return code === 'ENOENT' || code === 'EACCES';
}

/** Resolves after ms with `value`, without keeping the process alive. */
function after<T>(ms: number, value: T): Promise<T> {
  return new Promise((resolve) => setTimeout(() => resolve(value), ms).unref());
}

/** Resolves with `value` once signal aborts (never when there is none). */
function onAbort<T>(signal: AbortSignal | undefined, value: T): Promise<T> {
  if (!signal) return new Promise(() => undefined);
  if (signal.aborted) return Promise.resolve(value);
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(value), { once: true }));
}

/**
 * Splits a stream's chunks into lines with bounded memory: a line past maxChars is cut there and the rest of it
 * dropped (onOverlong); the partial last line is kept until its newline comes.
 */
export function createLineSplitter(
  onLine: (line: string) => void,
  maxChars: number,
  onOverlong: () => void,
): (chunk: string) => void {
  let partial = '';
  let skipping = false;
  return (chunk) => {
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf('\n', start);
      const piece = chunk.slice(start, nl < 0 ? chunk.length : nl);
      if (!skipping) {
        if (partial.length + piece.length > maxChars) {
          skipping = true;
          partial = '';
          onOverlong();
        } else {
          partial += piece;
        }
      }
      if (nl < 0) return;
      if (!skipping) onLine(partial.replace(/\r$/, ''));
      partial = '';
      skipping = false;
      start = nl + 1;
    }
  };
}

/**
 * The real runner, on execa: no shell, never rejects (a failed command is data). Every command is bounded in time
 * and output, and a caller's signal ends it at once; a child that will not die even by SIGKILL is abandoned, so no
 * caller ever waits on it.
 */
export function createExecaRunner(): CommandRunner {
  return {
    async run(file, args, options = {}) {
      const timeoutMs = options.timeoutMs ?? 15_000;
      const child = execa(file, args, {
        reject: false,
        timeout: timeoutMs,
        maxBuffer: options.maxChars ?? DEFAULT_MAX_OUTPUT_CHARS,
        forceKillAfterDelay: KILL_GRACE_MS,
        ...(options.signal ? { cancelSignal: options.signal } : {}),
        env: options.env,
        extendEnv: true,
        stdin: 'ignore',
        stripFinalNewline: false,
      });
      const finished = child.then((result) => {
        const cause = (result as { cause?: unknown }).cause;
        const out: ExecResult = {
          exitCode: result.exitCode ?? null,
          stdout: typeof result.stdout === 'string' ? result.stdout : '',
          stderr: typeof result.stderr === 'string' ? result.stderr : cause instanceof Error ? cause.message : '',
        };
        if (isNotFound(cause)) out.notFound = true;
        if (result.timedOut) out.timedOut = true;
        if (result.isMaxBuffer) out.tooLarge = true;
        if (result.isCanceled) out.aborted = true;
        return out;
      });
      const abandoned: ExecResult = { exitCode: null, stdout: '', stderr: '', timedOut: true };
      const cancelled: ExecResult = { exitCode: null, stdout: '', stderr: '', aborted: true };
      const result = await Promise.race([
        finished,
        after(timeoutMs + ABANDON_AFTER_MS, abandoned),
        onAbort(options.signal, cancelled),
      ]);
      if (result === abandoned || result === cancelled) child.kill('SIGKILL');
      return result;
    },
    spawnLines(file, args, onLine, options = {}) {
      const child = execa(file, args, {
        reject: false,
        buffer: { stdout: false, stderr: true },
        maxBuffer: { stderr: DEFAULT_MAX_OUTPUT_CHARS },
        env: options.env,
        extendEnv: true,
        stdin: 'ignore',
        forceKillAfterDelay: KILL_GRACE_MS,
      });
      if (child.stdout) {
        child.stdout.setEncoding('utf8');
        const split = createLineSplitter(
          onLine,
          options.maxLineChars ?? DEFAULT_MAX_LINE_CHARS,
          options.onOverlong ?? (() => undefined),
        );
        child.stdout.on('data', (chunk: string) => {
          options.onBytes?.(chunk.length);
          split(chunk);
        });
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
            // Nothing it prints any more is read: a flood stops costing this process at once.
            child.stdout?.removeAllListeners('data');
            child.stdout?.resume();
            if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
            const gone = await Promise.race([exited.then(() => true), after(ABANDON_AFTER_MS, false)]);
            if (!gone) child.kill('SIGKILL');
          })();
          return stopping;
        },
      };
    },
  };
}
