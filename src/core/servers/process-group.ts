import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/** Grace periods of the stop sequence: SIGINT, wait, SIGTERM, wait, SIGKILL. */
export interface StopGrace {
  /** After SIGINT (vLLM and SGLang shut down cleanly on it). */
  interruptMs: number;
  /** After SIGTERM. */
  terminateMs: number;
  /** After SIGKILL, how long to wait for the kernel to reap. */
  killMs: number;
}

export const DEFAULT_GRACE: StopGrace = { interruptMs: 10_000, terminateMs: 5_000, killMs: 5_000 };

const hasProc = ((): boolean => {
  try {
    readdirSync('/proc/self');
    return true;
  } catch {
    return false;
  }
})();

interface ProcStat {
  state: string;
  pgrp: number;
}

function readStat(pid: number | string): ProcStat | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const rest = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { state: rest[0] ?? '?', pgrp: Number(rest[2]) };
  } catch {
    return undefined;
  }
}

/**
 * True while a process exists and is not a zombie. (A zombie still answers kill(pid, 0), and where
 * PID 1 does not reap orphans it stays one forever; it holds no resources, so it counts as gone.)
 */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  if (!hasProc) return true;
  const stat = readStat(pid);
  return stat !== undefined && stat.state !== 'Z' && stat.state !== 'X';
}

/** Live (non-zombie) members of a process group. */
function groupMembers(pgid: number): number[] {
  if (!hasProc) {
    try {
      process.kill(-pgid, 0);
      return [pgid];
    } catch {
      return [];
    }
  }
  const members: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readStat(entry);
    if (stat && stat.pgrp === pgid && stat.state !== 'Z' && stat.state !== 'X') members.push(Number(entry));
  }
  return members;
}

/** True while any member of the process group is alive. */
export function isGroupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
  } catch {
    return false;
  }
  return groupMembers(pgid).length > 0;
}

/** Sends a signal to a whole process group; false when the group is gone. */
export function signalGroup(pgid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false;
  }
}

const delay = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Resolves true once the group is gone, false when `ms` passed first (polls /proc; there is no event for it). */
export async function waitGroupGone(pgid: number, ms: number, pollMs = 50): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (!isGroupAlive(pgid)) return true;
    if (Date.now() >= deadline) return false;
    await delay(Math.min(pollMs, Math.max(1, deadline - Date.now())));
  }
}

/**
 * Stops a whole process group: SIGINT, then SIGTERM, then SIGKILL, each after its grace period.
 * Returns the last signal that was needed (undefined when the group was already gone).
 */
export async function stopGroup(
  pgid: number,
  grace: StopGrace = DEFAULT_GRACE,
  onEscalate?: (signal: NodeJS.Signals, afterMs: number) => void,
): Promise<NodeJS.Signals | undefined> {
  if (!isGroupAlive(pgid)) return undefined;
  const steps: Array<[NodeJS.Signals, number]> = [
    ['SIGINT', grace.interruptMs],
    ['SIGTERM', grace.terminateMs],
    ['SIGKILL', grace.killMs],
  ];
  let previousWait = 0;
  for (const [signal, wait] of steps) {
    if (signal !== 'SIGINT') onEscalate?.(signal, previousWait);
    previousWait = wait;
    if (!signalGroup(pgid, signal)) return signal;
    if (await waitGroupGone(pgid, wait)) return signal;
  }
  return 'SIGKILL';
}

// ---- last resort: nothing outlives this process -------------------------------------------------

const liveGroups = new Map<number, () => Promise<void>>();
let hooksInstalled = false;

function onExit(): void {
  for (const pgid of liveGroups.keys()) signalGroup(pgid, 'SIGKILL');
}

let signalled = false;

function onSignal(signal: NodeJS.Signals): void {
  // Only act when nobody else handles the signal: an app with its own handler stops its servers itself.
  if (process.listenerCount(signal) > 1) return;
  if (signalled) {
    // A second Ctrl-C while stopping: no more grace.
    onExit();
    uninstall();
    process.kill(process.pid, signal);
    return;
  }
  signalled = true;
  const stops = [...liveGroups.values()].map((stop) => stop().catch(() => undefined));
  void Promise.all(stops).finally(() => {
    uninstall();
    process.kill(process.pid, signal);
  });
}

const signalHandlers: Array<[NodeJS.Signals, () => void]> = (['SIGINT', 'SIGTERM', 'SIGHUP'] as const).map((s) => [
  s,
  () => onSignal(s),
]);

function install(): void {
  if (hooksInstalled) return;
  hooksInstalled = true;
  process.on('exit', onExit);
  for (const [signal, handler] of signalHandlers) process.on(signal, handler);
}

function uninstall(): void {
  if (!hooksInstalled) return;
  hooksInstalled = false;
  signalled = false;
  process.off('exit', onExit);
  for (const [signal, handler] of signalHandlers) process.off(signal, handler);
}

/**
 * Registers a live process group: on this process's exit it gets SIGKILL, and on SIGINT/SIGTERM/SIGHUP
 * (when no one else listens) it is stopped before the signal is re-raised. Returns the unregister function.
 */
export function trackGroup(pgid: number, stop: () => Promise<void>): () => void {
  liveGroups.set(pgid, stop);
  install();
  return () => {
    liveGroups.delete(pgid);
    if (liveGroups.size === 0) uninstall();
  };
}

/** Process groups servebench still owns (for tests and diagnostics). */
export function trackedGroups(): number[] {
  return [...liveGroups.keys()];
}

// ---- watchdog: children die with their parent, however it dies ------------------------------------

// Runs in its own process (node -e). It ends when told to stand down; when its parent is gone (stdin
// closes: the kernel closes the parent's end even on SIGKILL; or it is re-parented) it stops the group:
// SIGTERM, then SIGKILL after the grace. Plain JS, no imports, so it starts in a few tens of ms.
const WATCHDOG_SCRIPT = `
const pgid = Number(process.env.SERVEBENCH_WATCH_PGID);
const grace = Number(process.env.SERVEBENCH_WATCH_GRACE_MS) || 5000;
const parent = process.ppid;
let input = '';
let firing = false;
const gone = () => { try { process.kill(-pgid, 0); return false; } catch { return true; } };
const fire = () => {
  if (firing) return;
  firing = true;
  if (input.includes('stand-down')) process.exit(0);
  try { process.kill(-pgid, 'SIGTERM'); } catch { process.exit(0); }
  const until = Date.now() + grace;
  const tick = () => {
    if (gone()) process.exit(0);
    if (Date.now() >= until) { try { process.kill(-pgid, 'SIGKILL'); } catch {} process.exit(0); }
    setTimeout(tick, 100);
  };
  setTimeout(tick, 100);
};
process.stdin.setEncoding('utf8');
process.stdin.on('data', (d) => { input += d; if (input.includes('stand-down')) process.exit(0); });
process.stdin.on('end', fire);
process.stdin.on('close', fire);
process.stdin.on('error', fire);
setInterval(() => { if (process.ppid !== parent) fire(); }, 500);
`;

/** A watchdog process guarding one process group. */
export interface Watchdog {
  pid: number | undefined;
  /** The owner stopped the group itself: the watchdog exits without touching it. */
  standDown(): void;
  /** Resolves when the watchdog process has exited. */
  exited: Promise<void>;
}

/**
 * Starts a tiny detached process that stops the group `pgid` (SIGTERM, then SIGKILL after `graceMs`) as
 * soon as this process is gone, whatever ended it (SIGKILL, the OOM killer, a crash): exit hooks do not
 * run then. It does not keep this process alive. Call standDown() once the group is stopped.
 */
export function startWatchdog(pgid: number, options: { nodePath?: string; graceMs?: number } = {}): Watchdog {
  const child = spawn(options.nodePath ?? process.execPath, ['-e', WATCHDOG_SCRIPT], {
    detached: true,
    stdio: ['pipe', 'ignore', 'ignore'],
    env: {
      SERVEBENCH_WATCH_PGID: String(pgid),
      SERVEBENCH_WATCH_GRACE_MS: String(options.graceMs ?? DEFAULT_GRACE.terminateMs),
      // Electron's binary acts as plain Node with this set (the desktop app's engine host).
      ELECTRON_RUN_AS_NODE: '1',
    },
  });
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.once('error', () => resolve());
  });
  child.stdin?.on('error', () => undefined);
  child.unref();
  (child.stdin as unknown as { unref?: () => void } | null)?.unref?.();
  let stood = false;
  return {
    pid: child.pid,
    exited,
    standDown() {
      if (stood) return;
      stood = true;
      child.stdin?.end('stand-down\n');
    },
  };
}
