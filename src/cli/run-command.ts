import { UserError } from '../core/errors.js';

/** `servebench run` (being built). */
export async function runCommand(_argv: string[]): Promise<number> {
  throw new UserError('the run command is not available in this build yet');
}
