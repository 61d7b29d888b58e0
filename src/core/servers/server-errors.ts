import { UserError } from '../errors.js';
import type { Lifecycle } from './lifecycle-state.js';
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

/** The caller's abort reason, or a plain AbortError. */
export function abortError(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('The operation was aborted.', 'AbortError');
}

/** Reports the failure (state 'failed') and throws it as a ServerStartError. */
export function failStart(lifecycle: Lifecycle, failure: ServerFailure): never {
  lifecycle.to('failed', `${failure.message}; fix: ${failure.fix}`);
  throw new ServerStartError(failure);
}
