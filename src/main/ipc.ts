import { ipcMain } from 'electron';
import type { IpcMainInvokeEvent, WebContents } from 'electron';
import { CONTRACT_METHODS, contractArgs } from '../shared/contract.js';
import type { ServebenchContract } from '../shared/contract.js';
import { dispatchCall, zodErrorLine } from '../core/ui-server/dispatch.js';
import { EVENT_CHANNEL, callChannel } from '../preload/bridge.js';
import type { IpcOutcome } from '../preload/bridge.js';
import type { EngineClient } from './engine-client.js';

export interface ContractIpcOptions {
  engine: Pick<EngineClient, 'call' | 'onEvent'>;
  /** Where events go: the app's windows. */
  targets: () => WebContents[];
  /** Calls from anything else (a stray frame, another page) are refused. */
  trusted?: (event: IpcMainInvokeEvent) => boolean;
  /** Methods main answers itself (settings through safeStorage, the OS trash, the file manager). */
  local?: Partial<ServebenchContract>;
}

/**
 * The only place main touches ipcMain: one handler per contract method, arguments validated here (the
 * renderer is not trusted) and relayed to the engine process; its events forwarded to every window.
 * Returns the function that removes it all.
 */
export function registerContractIpc(options: ContractIpcOptions): () => void {
  const { engine, targets, trusted = () => true, local = {} } = options;
  for (const method of CONTRACT_METHODS) {
    ipcMain.handle(callChannel(method), async (event: IpcMainInvokeEvent, ...args: unknown[]): Promise<IpcOutcome> => {
      if (!trusted(event)) return { ok: false, error: 'refused: not a servebench window' };
      const parsed = contractArgs[method].safeParse(args);
      if (!parsed.success) return { ok: false, error: zodErrorLine(parsed.error) };
      if (local[method]) return dispatchCall(local as ServebenchContract, method, args);
      return engine.call(method, args);
    });
  }
  const off = engine.onEvent((event) => {
    for (const wc of targets()) if (!wc.isDestroyed()) wc.send(EVENT_CHANNEL, event);
  });
  return () => {
    off();
    for (const method of CONTRACT_METHODS) ipcMain.removeHandler(callChannel(method));
  };
}
