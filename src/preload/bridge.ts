import type { CompareFormat, ContractEvent, ContractMethod, ExportFormat } from '../shared/contract.js';

/** What preload exposes as `window.servebench`: the contract's calls and its events, nothing else. */
export interface ServebenchBridge {
  call(method: ContractMethod, args: unknown[]): Promise<unknown>;
  /** Returns the function that unsubscribes. */
  onEvent(listener: (event: ContractEvent) => void): () => void;
  /** Electron only: exports a finished run to a file the user picks in a save dialog (pdf printed by Chromium). */
  saveExport?(runId: string, format: ExportFormat): Promise<{ saved: string | null }>;
  /** Electron only: saves a comparison of runs to a file the user picks in a save dialog. */
  saveComparison?(runIds: string[], format: CompareFormat): Promise<{ saved: string | null }>;
}

/** IPC channel of one contract method (one ipcMain.handle each). */
export const callChannel = (method: ContractMethod): string => `servebench:${method}`;
/** IPC channel of Export in Electron: main shows the save dialog and writes the file. */
export const SAVE_EXPORT_CHANNEL = 'servebench:save-export';
/** IPC channel of saving a comparison in Electron: main shows the save dialog and writes the file. */
export const SAVE_COMPARISON_CHANNEL = 'servebench:save-comparison';
/** IPC channel the main process pushes RunEvents on. */
export const EVENT_CHANNEL = 'servebench:event';

/** A call's outcome over IPC: data, so the renderer gets the one-line message, not Electron's wrapper text. */
export type IpcOutcome = { ok: true; result: unknown } | { ok: false; error: string };

/**
 * The contract's method names without importing zod into the sandboxed preload;
 * `satisfies` makes the compiler reject a missing or unknown name.
 */
export const BRIDGE_METHODS = Object.keys({
  startRun: true,
  cancelRun: true,
  activeRun: true,
  listRuns: true,
  getRun: true,
  getRequests: true,
  getRequestChart: true,
  getTelemetry: true,
  listPresets: true,
  exportRun: true,
  compareRuns: true,
  probeEngine: true,
  planRun: true,
  getLatencyDistribution: true,
  liveEvents: true,
  getSettings: true,
  saveSettings: true,
  renameRun: true,
  deleteRun: true,
  openRunFolder: true,
  pickFile: true,
} satisfies Record<ContractMethod, true>) as ContractMethod[];
