import { EventEmitter } from 'node:events';
import { describe, expect, it, vi } from 'vitest';
import { createEngineClient } from '../../src/main/engine-client.js';
import type { EngineProcess } from '../../src/main/engine-client.js';
import { createEngineHostHandler } from '../../src/main/engine-host-handler.js';
import type { FromEngine, ToEngine } from '../../src/main/engine-protocol.js';
import { installQuitGuard } from '../../src/main/lifecycle.js';
import type { ContractEvent } from '../../src/shared/contract.js';
import { FakeService } from '../fakes/fake-service.js';

/** The utility process in-process: main's messages go to the real host handler over a fake service. */
function fakeUtilityProcess(
  service: FakeService,
): EngineProcess & { exits: number[]; killed: boolean; crash(code: number): void } {
  const emitter = new EventEmitter();
  const proc = {
    exits: [] as number[],
    killed: false,
    handle: createEngineHostHandler(
      service,
      (m: FromEngine) => queueMicrotask(() => emitter.emit('message', structuredClone(m))),
      (code) => {
        proc.exits.push(code);
        queueMicrotask(() => emitter.emit('exit', code));
      },
    ),
    postMessage(m: ToEngine) {
      void proc.handle(structuredClone(m));
    },
    on(event: string, listener: (...a: never[]) => void) {
      emitter.on(event, listener as (...a: unknown[]) => void);
      return proc;
    },
    kill() {
      proc.killed = true;
      emitter.emit('exit', 137);
      return true;
    },
    crash(code: number) {
      emitter.emit('exit', code);
    },
  };
  return proc;
}

describe('engine in a utility process (main side and host side)', () => {
  it('relays calls, validates them in the host too, and passes events back', async () => {
    const service = new FakeService();
    const engine = createEngineClient(() => fakeUtilityProcess(service));
    const events: ContractEvent[] = [];
    engine.onEvent((e) => events.push(e));
    expect(await engine.call('listPresets', [])).toEqual({
      ok: true,
      result: [{ name: 'sim-demo', description: 'the simulator' }],
    });
    expect(await engine.call('getRun', [5])).toMatchObject({
      ok: false,
      error: expect.stringMatching(/expected string/),
    });
    expect(await engine.call('startRun', [{ concurrency: [1] }])).toMatchObject({ ok: true, result: { runId: 'r1' } });
    expect(events.map((e) => e.type)).toEqual(['run-started']);
  });

  it('spawns once, and again after the process died, failing the calls it took down with it', async () => {
    const service = new FakeService();
    const procs: Array<ReturnType<typeof fakeUtilityProcess>> = [];
    const engine = createEngineClient(() => {
      const p = fakeUtilityProcess(service);
      procs.push(p);
      return p;
    });
    const events: ContractEvent[] = [];
    engine.onEvent((e) => events.push(e));
    await engine.call('listRuns', []);
    await engine.call('listRuns', []);
    expect(procs).toHaveLength(1);
    // A call whose answer never comes: the process dies first.
    service.listRuns = () => new Promise(() => undefined);
    const lost = engine.call('listRuns', []);
    procs[0]?.crash(9);
    expect(await lost).toEqual({ ok: false, error: 'the engine process stopped (exit code 9)' });
    expect(events.at(-1)).toMatchObject({ type: 'message', severity: 'error' });
    await engine.call('activeRun', []);
    expect(procs).toHaveLength(2);
  });

  it('on quit: holds the quit, cancels the active run, waits for it to be saved and stopped, then quits', async () => {
    const service = new FakeService();
    let proc: ReturnType<typeof fakeUtilityProcess> | undefined;
    const engine = createEngineClient(() => (proc = fakeUtilityProcess(service)));
    await engine.call('startRun', [{ concurrency: [1, 2] }]);

    const app = new EventEmitter() as EventEmitter & { quit: () => void };
    let quitCalled: () => void = () => undefined;
    const quitting = new Promise<void>((resolve) => (quitCalled = resolve));
    const quit = vi.fn(() => {
      app.emit('before-quit', { preventDefault: vi.fn() });
      quitCalled();
    });
    app.quit = quit;
    const stopping = vi.fn();
    installQuitGuard(app as never, engine, stopping);

    const first = { preventDefault: vi.fn() };
    app.emit('before-quit', first);
    expect(first.preventDefault).toHaveBeenCalled();
    expect(stopping).toHaveBeenCalledTimes(1);
    // A second Cmd-Q while stopping is held too, and does not start another shutdown.
    const second = { preventDefault: vi.fn() };
    app.emit('before-quit', second);
    expect(second.preventDefault).toHaveBeenCalled();

    await quitting; // the engine has shut down and the guard let the quit through
    expect(quit).toHaveBeenCalledTimes(1);
    expect(service.cancelled).toEqual(['r1']);
    expect(proc?.exits).toEqual([0]);
    expect(proc?.killed).toBe(false);
    // Once stopped, calls are refused instead of respawning the engine.
    expect(await engine.call('listRuns', [])).toEqual({ ok: false, error: 'servebench is quitting' });
  });

  it('kills the engine process when it does not stop in time', async () => {
    const service = new FakeService();
    let proc: ReturnType<typeof fakeUtilityProcess> | undefined;
    const engine = createEngineClient(() => (proc = fakeUtilityProcess(service)));
    await engine.call('startRun', [{ concurrency: [1] }]);
    service.cancelRun = () => new Promise(() => undefined); // a server that never stops
    await engine.shutdown(50);
    expect(proc?.killed).toBe(true);
  });

  it('quits at once when no engine was started', async () => {
    const engine = createEngineClient(() => {
      throw new Error('must not spawn');
    });
    await expect(engine.shutdown()).resolves.toBeUndefined();
  });
});
