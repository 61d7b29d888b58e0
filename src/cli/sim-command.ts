import { UserError } from '../core/errors.js';

/** `servebench sim` (being built). */
export async function simCommand(_argv: string[]): Promise<number> {
  throw new UserError('the sim command is not available in this build yet');
}
