import { contextBridge, ipcRenderer } from 'electron';
import type { IpcRendererEvent } from 'electron';
import type { CompareFormat, ContractEvent, ContractMethod, ExportFormat } from '../shared/contract.js';
import { BRIDGE_METHODS, EVENT_CHANNEL, SAVE_COMPARISON_CHANNEL, SAVE_EXPORT_CHANNEL, callChannel } from './bridge.js';
import type { IpcOutcome, ServebenchBridge } from './bridge.js';

// The renderer gets the contract and nothing else: no ipcRenderer, no Node.
const bridge: ServebenchBridge = {
  async call(method: ContractMethod, args: unknown[]) {
    if (!BRIDGE_METHODS.includes(method)) throw new Error(`unknown method '${String(method)}'`);
    const outcome = (await ipcRenderer.invoke(callChannel(method), ...(Array.isArray(args) ? args : []))) as IpcOutcome;
    if (!outcome.ok) throw new Error(outcome.error);
    return outcome.result;
  },
  onEvent(listener: (event: ContractEvent) => void) {
    const handler = (_e: IpcRendererEvent, event: ContractEvent): void => listener(event);
    ipcRenderer.on(EVENT_CHANNEL, handler);
    return () => {
      ipcRenderer.removeListener(EVENT_CHANNEL, handler);
    };
  },
  async saveExport(runId: string, format: ExportFormat) {
    const outcome = (await ipcRenderer.invoke(SAVE_EXPORT_CHANNEL, runId, format)) as IpcOutcome;
    if (!outcome.ok) throw new Error(outcome.error);
    return outcome.result as { saved: string | null };
  },
  async saveComparison(runIds: string[], format: CompareFormat) {
    const outcome = (await ipcRenderer.invoke(SAVE_COMPARISON_CHANNEL, runIds, format)) as IpcOutcome;
    if (!outcome.ok) throw new Error(outcome.error);
    return outcome.result as { saved: string | null };
  },
};

contextBridge.exposeInMainWorld('servebench', bridge);
