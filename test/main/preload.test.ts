import { describe, expect, it, vi } from 'vitest';
import { BRIDGE_METHODS } from '../../src/preload/bridge.js';
import type { ServebenchBridge } from '../../src/preload/bridge.js';
import { CONTRACT_METHODS } from '../../src/shared/contract.js';
import { menuTemplate } from '../../src/main/menu.js';

const exposed: Record<string, unknown> = {};
const invoke = vi.fn(async (channel: string, ...args: unknown[]) =>
  channel === 'servebench:getRun' ? { ok: false, error: 'run x not found' } : { ok: true, result: { channel, args } },
);
const on = vi.fn();
const removeListener = vi.fn();
vi.mock('electron', () => ({
  contextBridge: { exposeInMainWorld: (key: string, api: unknown) => (exposed[key] = api) },
  ipcRenderer: {
    invoke: (...a: [string, ...unknown[]]) => invoke(...a),
    on: (...a: unknown[]) => on(...a),
    removeListener: (...a: unknown[]) => removeListener(...a),
  },
}));

describe('preload bridge', () => {
  it('names exactly the contract methods', () => {
    expect([...BRIDGE_METHODS].sort()).toEqual([...CONTRACT_METHODS].sort());
  });

  it('exposes only call, onEvent, saveExport and saveComparison, restricted to the contract, with one-line errors', async () => {
    await import('../../src/preload/index.js');
    const bridge = exposed.servebench as ServebenchBridge;
    expect(Object.keys(bridge).sort()).toEqual(['call', 'onEvent', 'saveComparison', 'saveExport']);
    expect(await bridge.call('cancelRun', ['r1'])).toEqual({ channel: 'servebench:cancelRun', args: ['r1'] });
    await expect(bridge.call('getRun', ['x'])).rejects.toThrow(/^run x not found$/);
    await expect(bridge.call('openShell' as never, [])).rejects.toThrow(/unknown method/);
    expect(invoke).toHaveBeenCalledTimes(2);
    expect(await bridge.saveExport!('r1', 'pdf')).toEqual({ channel: 'servebench:save-export', args: ['r1', 'pdf'] });
    expect(await bridge.saveComparison!(['r1', 'r2'], 'md')).toEqual({
      channel: 'servebench:save-comparison',
      args: [['r1', 'r2'], 'md'],
    });

    const listener = vi.fn();
    const off = bridge.onEvent(listener);
    const [[channel, handler]] = on.mock.calls as [[string, (e: unknown, ev: unknown) => void]];
    expect(channel).toBe('servebench:event');
    handler({ sender: 'ipc internals' }, { type: 'server-state', state: 'ready' });
    expect(listener).toHaveBeenCalledWith({ type: 'server-state', state: 'ready' });
    off();
    expect(removeListener).toHaveBeenCalledWith('servebench:event', handler);
  });

  it('builds a menu with the runs folder and the usual roles', () => {
    const actions = { openRunsFolder: vi.fn(), newWindow: vi.fn(), docs: vi.fn() };
    const linux = menuTemplate(actions, 'linux');
    expect(linux.map((m) => m.label ?? m.role)).toEqual(['File', 'editMenu', 'View', 'windowMenu', 'help']);
    const file = linux[0]?.submenu as Array<{ label?: string; click?: () => void; role?: string }>;
    file.find((i) => i.label === 'Open Runs Folder')?.click?.();
    expect(actions.openRunsFolder).toHaveBeenCalled();
    expect(file.at(-1)?.role).toBe('quit');
    expect(menuTemplate(actions, 'darwin')[0]?.role).toBe('appMenu');
  });
});
