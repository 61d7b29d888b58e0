import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { createEngineClient } from '../../src/main/engine-client.js';
import type { EngineProcess } from '../../src/main/engine-client.js';
import { createEngineHostHandler } from '../../src/main/engine-host-handler.js';
import type { FromEngine, ToEngine } from '../../src/main/engine-protocol.js';
import type { ServebenchBridge } from '../../src/preload/bridge.js';
import { createIpcTransport } from '../../src/renderer/lib/transport.js';
import type { ContractEvent } from '../../src/shared/contract.js';
import { FakeService } from '../fakes/fake-service.js';

/** The utility process in-process, messages kept in order as Electron's port keeps them. */
function inProcessEngine(service: FakeService): EngineProcess {
  const emitter = new EventEmitter();
  const handle = createEngineHostHandler(
    service,
    (m: FromEngine) => queueMicrotask(() => emitter.emit('message', structuredClone(m))),
    () => undefined,
  );
  return {
    postMessage: (m: ToEngine) => void handle(structuredClone(m)),
    on(event: string, listener: (...a: never[]) => void) {
      emitter.on(event, listener as (...a: unknown[]) => void);
      return this;
    },
    kill: () => true,
  };
}

describe('a reloaded Electron window rebuilds the live run (replay from the service, relayed by main)', () => {
  it('a new window listener gets the run so far through liveEvents, then the new events', async () => {
    const service = new FakeService();
    const engine = createEngineClient(() => inProcessEngine(service));
    // What preload + main give the renderer: calls through the engine client, events from it.
    const bridge: ServebenchBridge = {
      call: async (method, args) => {
        const outcome = await engine.call(method, args);
        if (!outcome.ok) throw new Error(outcome.error);
        return outcome.result;
      },
      onEvent: (listener) => engine.onEvent(listener),
    };
    await bridge.call('startRun', [{ concurrency: [1] }]);
    service.emit({ type: 'server-state', state: 'ready' });
    // A round trip: everything the engine posted before it has reached main.
    await bridge.call('listRuns', []);

    const window: ContractEvent[] = [];
    createIpcTransport(bridge).onEvent((e) => window.push(e));
    await bridge.call('listRuns', []); // the liveEvents answer came before this one
    expect(window.map((e) => e.type)).toEqual(['run-started', 'server-state']);
    service.emit({ type: 'message', severity: 'info', text: 'after the reload' });
    await bridge.call('listRuns', []);
    expect(window.at(-1)).toMatchObject({ text: 'after the reload' });
    expect(window).toHaveLength(3);
  });
});
