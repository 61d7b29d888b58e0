import { spawn as nodeSpawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { startWatchdog, stopGroup, trackGroup, type StopGrace } from './process-group.js';
import { realClock, type WaitClock } from './readiness.js';

/** How a process ended. */
export interface ProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** The process-group operations a ManagedProcess uses (tests pass fakes; the default acts on real groups). */
export interface GroupControl {
  /** SIGINT, SIGTERM, SIGKILL on the whole group, each after its grace. */
  stop(pgid: number, grace: StopGrace, onEscalate: (signal: NodeJS.Signals, afterMs: number) => void): Promise<unknown>;
  /** Registers the group for servebench's exit and signal hooks; returns the unregister function. */
  track(pgid: number, onOwnerSignal: () => Promise<void>): () => void;
  /** Starts the watchdog that stops the group when servebench dies; returns its stand-down. */
  watch(pgid: number): () => void;
}

/** The real group control, with the watchdog's node binary and grace. */
function realGroupControl(options: { nodePath?: string; graceMs?: number } = {}): GroupControl {
  return {
    stop: (pgid, grace, onEscalate) => stopGroup(pgid, grace, onEscalate),
    track: trackGroup,
    watch: (pgid) => {
      const watchdog = startWatchdog(pgid, options);
      return () => watchdog.standDown();
    },
  };
}

/** child_process.spawn's shape, as far as a ManagedProcess uses it. */
export type SpawnFn = (
  command: string,
  args: readonly string[],
  options: { env: NodeJS.ProcessEnv; stdio: ['ignore', 'pipe', 'pipe']; detached: true },
) => ChildProcess;

/** What to run and where its output goes. */
export interface ManagedProcessOptions {
  command: string;
  args: readonly string[];
  env: NodeJS.ProcessEnv;
  /** server.log: appended to, every output line after `header`. */
  logFile: string;
  /** First line written to the log (the command, redacted). */
  header: string;
  /** Applied to every output line before it is logged, kept or passed on. */
  redact?: (line: string) => string;
  /** Lines kept in memory (tail()). */
  tailLines: number;
  /** Every output line, redacted, after it was logged and kept. */
  onLine?: (line: string, stream: 'stdout' | 'stderr') => void;
  /** Called synchronously at the exit, before `exited` resolves. */
  onExit?: (exit: ProcessExit) => void;
  /** servebench got SIGINT/SIGTERM/SIGHUP with no handler of its own: stop (default: reap()). */
  onOwnerSignal?: () => Promise<void>;
  grace: StopGrace;
  /** The stop escalated to `signal` after `afterMs` of the previous one. */
  onEscalate?: (signal: NodeJS.Signals, afterMs: number) => void;
  spawn?: SpawnFn;
  /** Default: the real groups, the watchdog run by `nodePath` (default process.execPath). */
  groups?: GroupControl;
  nodePath?: string;
  clock?: WaitClock;
  /** How long reap() waits for the output pipes to close after the group is gone. */
  pipesGraceMs?: number;
}

/** The spawn did not happen: the OS error code (ENOENT, EACCES) or 'no pid'. */
export interface SpawnFailure {
  ok: false;
  code: string;
}

/**
 * One engine process in its own process group: its output logged (server.log, a tail, a line callback),
 * its exit known at once, and reap() stopping the whole group with escalation. Guarded by the exit hooks
 * and the watchdog from spawn until reaped.
 */
export class ManagedProcess {
  readonly pid: number;
  /** Resolves at the exit (the leader's; other group members may live on until reap()). */
  readonly exited: Promise<ProcessExit>;
  #exit: ProcessExit | undefined;
  readonly #tail: string[] = [];
  readonly #closed: Promise<void>;
  #reaping: Promise<void> | undefined;

  private constructor(
    private readonly child: ChildProcess,
    private readonly log: LogFile,
    private readonly options: ManagedProcessOptions,
    private readonly groups: GroupControl,
    private readonly untrack: () => void,
  ) {
    this.pid = child.pid as number;
    const tailMax = options.tailLines;
    const onLine = (raw: string, stream: 'stdout' | 'stderr'): void => {
      const line = options.redact ? options.redact(raw) : raw;
      log.write(`${line}\n`);
      this.#tail.push(line);
      if (this.#tail.length > tailMax) this.#tail.splice(0, this.#tail.length - tailMax);
      options.onLine?.(line, stream);
    };
    if (child.stdout)
      createInterface({ input: child.stdout, crlfDelay: Infinity }).on('line', (l) => onLine(l, 'stdout'));
    if (child.stderr)
      createInterface({ input: child.stderr, crlfDelay: Infinity }).on('line', (l) => onLine(l, 'stderr'));
    this.#closed = new Promise((resolve) => child.once('close', () => resolve()));
    this.exited = new Promise((resolve) => {
      child.once('exit', (code: number | null, signal: NodeJS.Signals | null) => {
        this.#exit = { code, signal };
        options.onExit?.(this.#exit);
        resolve(this.#exit);
      });
    });
  }

  /** Spawns `command` in a new process group; a failed spawn is a SpawnFailure, never a throw. */
  static async start(options: ManagedProcessOptions): Promise<ManagedProcess | SpawnFailure> {
    const log = new LogFile(options.logFile);
    log.write(`${options.header}\n`);
    const child = (options.spawn ?? (nodeSpawn as SpawnFn))(options.command, options.args, {
      env: options.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    const spawned = await new Promise<{ ok: true } | SpawnFailure>((resolve) => {
      child.once('spawn', () => resolve({ ok: true }));
      child.once('error', (error: NodeJS.ErrnoException) => resolve({ ok: false, code: error.code ?? 'ERROR' }));
    });
    if (!spawned.ok || child.pid === undefined) {
      await log.close();
      return spawned.ok ? { ok: false, code: 'no pid' } : spawned;
    }
    child.on('error', () => undefined); // later errors (e.g. signalling a dead child) are handled by 'exit'
    const pgid = child.pid;
    const groups =
      options.groups ?? realGroupControl({ nodePath: options.nodePath, graceMs: options.grace.terminateMs });
    // Exit hooks do not run when this process is SIGKILLed (OOM killer): a watchdog stops the group then.
    const standDown = groups.watch(pgid);
    let managed: ManagedProcess | undefined = undefined;
    const untrackGroup = groups.track(pgid, () =>
      options.onOwnerSignal ? options.onOwnerSignal() : (managed as ManagedProcess).reap(),
    );
    managed = new ManagedProcess(child, log, options, groups, () => {
      untrackGroup();
      standDown();
    });
    return managed;
  }

  /** The exit, once it happened (synchronous). */
  get exit(): ProcessExit | undefined {
    return this.#exit;
  }

  /** The last `lines` output lines (all kept ones when omitted). */
  tail(lines?: number): string[] {
    return lines === undefined ? [...this.#tail] : this.#tail.slice(-lines);
  }

  /** Stops the whole group (SIGINT, SIGTERM, SIGKILL), waits for the output to drain, closes the log. Idempotent. */
  reap(): Promise<void> {
    this.#reaping ??= (async () => {
      await this.groups.stop(this.pid, this.options.grace, (signal, afterMs) =>
        this.options.onEscalate?.(signal, afterMs),
      );
      // Output pipes close once every process holding them is gone; a process that left the group could hold them.
      const pipesGrace = new AbortController();
      const clock = this.options.clock ?? realClock;
      await Promise.race([this.#closed, clock.sleep(this.options.pipesGraceMs ?? 2_000, pipesGrace.signal)]);
      pipesGrace.abort();
      await this.log.close();
      this.untrack();
    })();
    return this.#reaping;
  }
}

/** server.log: appends while open; a write error closes it quietly (the run goes on without a log). */
class LogFile {
  readonly #stream: WriteStream;
  #open = true;

  constructor(path: string) {
    this.#stream = createWriteStream(path, { flags: 'a' });
    this.#stream.on('error', () => {
      this.#open = false;
    });
  }

  write(text: string): void {
    if (this.#open) this.#stream.write(text);
  }

  close(): Promise<void> {
    if (!this.#open) return Promise.resolve();
    this.#open = false;
    return new Promise((resolve) => this.#stream.end(resolve));
  }
}
