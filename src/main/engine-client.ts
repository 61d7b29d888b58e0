import type { ContractEvent, ContractMethod } from '../shared/contract.js';
import type { IpcOutcome } from '../preload/bridge.js';
import type { FromEngine, ToEngine } from './engine-protocol.js';

/** What main needs of the engine's utility process (Electron's UtilityProcess has these). */
export interface EngineProcess {
  postMessage(message: ToEngine): void;
  on(event: 'message', listener: (message: FromEngine) => void): unknown;
  on(event: 'exit', listener: (code: number) => void): unknown;
  kill(): boolean;
}

/** Main's handle on the engine: contract calls as messages, events back, and an orderly stop. */
export interface EngineClient {
  call(method: ContractMethod, args: unknown[]): Promise<IpcOutcome>;
  onEvent(listener: (event: ContractEvent) => void): () => void;
  /** Cancels the active run, waits until it is saved and its server stopped, then ends the process. */
  shutdown(timeoutMs?: number): Promise<void>;
}

/**
 * Starts the engine process on first use (and again if it died), relays calls and events.
 * `spawn` is utilityProcess.fork in the app and a fake in tests.
 */
export function createEngineClient(spawn: () => EngineProcess): EngineClient {
  const listeners = new Set<(event: ContractEvent) => void>();
  const pending = new Map<number, (outcome: IpcOutcome) => void>();
  let proc: EngineProcess | null = null;
  let nextId = 1;
  let stopped: (() => void) | null = null;
  let shuttingDown = false;

  const emit = (event: ContractEvent): void => {
    for (const l of listeners) l(event);
  };

  const ensure = (): EngineProcess => {
    if (proc) return proc;
    const p = spawn();
    proc = p;
    p.on('message', (message: FromEngine) => {
      if (message.type === 'result') {
        pending.get(message.id)?.(message.outcome);
        pending.delete(message.id);
      } else if (message.type === 'event') {
        emit(message.event);
      } else if (message.type === 'stopped') {
        stopped?.();
      }
    });
    p.on('exit', (code: number) => {
      if (proc === p) proc = null;
      for (const resolve of pending.values())
        resolve({ ok: false, error: `the engine process stopped (exit code ${code})` });
      pending.clear();
      stopped?.();
      if (!shuttingDown) {
        emit({
          type: 'message',
          severity: 'error',
          text: `the engine process stopped unexpectedly (exit code ${code}); it restarts on the next action`,
        });
      }
    });
    return p;
  };

  return {
    call(method, args) {
      if (shuttingDown) return Promise.resolve({ ok: false, error: 'servebench is quitting' });
      const id = nextId++;
      return new Promise<IpcOutcome>((resolve) => {
        pending.set(id, resolve);
        ensure().postMessage({ type: 'call', id, method, args });
      });
    },
    onEvent(listener) {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },
    async shutdown(timeoutMs = 120_000) {
      shuttingDown = true;
      const p = proc;
      if (!p) return;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          // The host did not finish in time: the process goes (its servers' own process groups were signalled).
          p.kill();
          resolve();
        }, timeoutMs);
        stopped = () => {
          clearTimeout(timer);
          resolve();
        };
        p.postMessage({ type: 'shutdown' });
      });
    },
  };
}
