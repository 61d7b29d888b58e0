/** The signals that stop a run or `servebench ui` cleanly: Ctrl-C, a kill, and a terminal or ssh session that closed. */
export const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/** One of STOP_SIGNALS. */
export type StopSignal = (typeof STOP_SIGNALS)[number];

/** What the run folder says stopped the run (a user's Ctrl-C keeps the plain cancel words). */
export const STOP_WORDS: Record<StopSignal, string | undefined> = {
  SIGINT: undefined,
  SIGTERM: 'stopped by SIGTERM',
  SIGHUP: 'stopped: the terminal closed (SIGHUP)',
};

/**
 * After SIGHUP the terminal is gone: a write to it fails (EIO, EPIPE) and, unheard, would end the process before
 * the run folder is saved. Output errors are dropped from then on.
 */
export function quietOutput(): void {
  for (const stream of [process.stdout, process.stderr]) {
    if (stream.listenerCount('error') === 0) stream.on('error', () => undefined);
  }
}
