import type { ContractEvent, ContractMethod } from '../shared/contract.js';
import type { IpcOutcome } from '../preload/bridge.js';

/** Main -> engine host (utility process). */
export type ToEngine = { type: 'call'; id: number; method: ContractMethod; args: unknown[] } | { type: 'shutdown' };

/** Engine host -> main. */
export type FromEngine =
  { type: 'result'; id: number; outcome: IpcOutcome } | { type: 'event'; event: ContractEvent } | { type: 'stopped' };

/** Environment variable that tells the engine host where run folders go. */
export const RUNS_DIR_ENV = 'SERVEBENCH_OUT';
