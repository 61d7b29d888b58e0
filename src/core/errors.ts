/** An error the user can cause and fix: printed as one line, never a stack trace. */
export class UserError extends Error {
  /** Exit code for the CLI: 2 = bad usage or unreachable server. */
  readonly exitCode: number;
  constructor(message: string, exitCode = 2) {
    super(message);
    this.name = 'UserError';
    this.exitCode = exitCode;
  }
}

/** True for errors that should be shown as one line. */
export function isUserError(error: unknown): error is UserError {
  return error instanceof UserError;
}
