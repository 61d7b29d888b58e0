// Electron is not installed here (and tests never need it): a fake ipcMain records the handlers.
export const handlers = new Map<string, (event: unknown, ...args: unknown[]) => Promise<unknown>>();

/** The `electron` module as main's IPC code sees it: `vi.mock('electron', () => import('./fake-ipc-main.js'))`. */
export const ipcMain = {
  handle: (channel: string, fn: (event: unknown, ...args: unknown[]) => Promise<unknown>) => handlers.set(channel, fn),
  removeHandler: (channel: string) => handlers.delete(channel),
};
