import { UserError } from '../core/errors.js';

/** `servebench gpu` (being built). */
export async function gpuCommand(_argv: string[]): Promise<number> {
  throw new UserError('the gpu command is not available in this build yet');
}
