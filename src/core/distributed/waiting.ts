/**
 * Resolves after `ms` or once `signal` fires, whichever is first; tests pass one they drive by hand. The timer keeps
 * the process alive (a worker waiting to retry rank 0 has nothing else to): every wait aborts its signal when done.
 */
export type Timer = (ms: number, signal: AbortSignal) => Promise<void>;

/** The real timer. */
export const realTimer: Timer = (ms, signal) =>
  new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done(): void {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });

/** A promise and its settlers, for answers that come later over the wire. */
export interface Deferred<T> {
  promise: Promise<T>;
  resolve: (value: T) => void;
  reject: (error: Error) => void;
}

/** A Deferred whose rejection is never reported as unhandled (it may settle before anyone awaits it). */
export function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  promise.catch(() => undefined);
  return { promise, resolve, reject };
}
