/**
 * Why the host stopped a run, from its abort signal's reason: the host's own words when it gave them as a string
 * (the CLI on SIGTERM or SIGHUP), else a user's cancel (Ctrl-C, the app's Cancel button).
 */
export function cancelWords(reason: unknown): string {
  return typeof reason === 'string' && reason.trim() !== '' ? reason.trim().slice(0, 200) : 'cancelled by the user';
}
