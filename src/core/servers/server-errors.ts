import { UserError } from '../errors.js';
import type { ServerFailure } from './types.js';

/** A server that failed to start (or to be reached): one clear line; `.failure` has the kind, fix and log tail. */
export class ServerStartError extends UserError {
  readonly failure: ServerFailure;
  constructor(failure: ServerFailure) {
    super(`server failed to start (${failure.kind}): ${failure.message}; fix: ${failure.fix}`);
    this.name = 'ServerStartError';
    this.failure = failure;
  }
}

/** A server config that cannot work (missing model, unknown quantization...): one line naming the setting. */
export class ServerConfigError extends UserError {
  constructor(message: string) {
    super(message);
    this.name = 'ServerConfigError';
  }
}
