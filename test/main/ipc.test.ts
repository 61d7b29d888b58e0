import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { ContractEvent } from '../../src/shared/contract.js';
import { CONTRACT_METHODS } from '../../src/shared/contract.js';

vi.mock('electron', () => import('./fake-ipc-main.js'));
const { handlers } = await import('./fake-ipc-main.js');

const { registerContractIpc } = await import('../../src/main/ipc.js');

function fakeEngine() {
  const listeners = new Set<(e: ContractEvent) => void>();
  return {
    listeners,
    call: vi.fn(async (method: string, args: unknown[]) => ({ ok: true as const, result: { method, args } })),
    onEvent: (l: (e: ContractEvent) => void) => {
      listeners.add(l);
      return () => {
        listeners.delete(l);
      };
    },
  };
}
const sender = { sender: { id: 1 } };

describe('contract IPC relay (main)', () => {
  beforeEach(() => handlers.clear());

  it('handles every contract method on its own channel and relays valid calls to the engine', async () => {
    const engine = fakeEngine();
    registerContractIpc({ engine, targets: () => [] });
    expect([...handlers.keys()].sort()).toEqual(CONTRACT_METHODS.map((m) => `servebench:${m}`).sort());
    const out = await handlers.get('servebench:getRun')?.(sender, 'r1');
    expect(out).toEqual({ ok: true, result: { method: 'getRun', args: ['r1'] } });
    expect(engine.call).toHaveBeenCalledWith('getRun', ['r1']);
  });

  it('validates arguments before the engine sees them and answers with one line', async () => {
    const engine = fakeEngine();
    registerContractIpc({ engine, targets: () => [] });
    const bad = (await handlers.get('servebench:startRun')?.(sender, { concurrency: [0] })) as {
      ok: boolean;
      error: string;
    };
    expect(bad.ok).toBe(false);
    expect(bad.error).toMatch(/^concurrency\.0: /);
    const wrongType = (await handlers.get('servebench:cancelRun')?.(sender, 7)) as { ok: boolean; error: string };
    expect(wrongType.ok).toBe(false);
    expect(engine.call).not.toHaveBeenCalled();
  });

  it('refuses calls from untrusted senders', async () => {
    const engine = fakeEngine();
    registerContractIpc({ engine, targets: () => [], trusted: (e) => e.sender.id === 2 });
    expect(await handlers.get('servebench:listRuns')?.(sender)).toEqual({
      ok: false,
      error: 'refused: not a servebench window',
    });
    expect(engine.call).not.toHaveBeenCalled();
  });

  it('forwards engine events to every live window, and unregisters cleanly', () => {
    const engine = fakeEngine();
    const live = { isDestroyed: () => false, send: vi.fn() };
    const gone = { isDestroyed: () => true, send: vi.fn() };
    const off = registerContractIpc({ engine, targets: () => [live, gone] as never });
    const event: ContractEvent = { type: 'server-state', state: 'ready' };
    for (const l of engine.listeners) l(event);
    expect(live.send).toHaveBeenCalledWith('servebench:event', event);
    expect(gone.send).not.toHaveBeenCalled();
    off();
    expect(handlers.size).toBe(0);
    expect(engine.listeners.size).toBe(0);
  });
});
