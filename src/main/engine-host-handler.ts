import type { ServebenchService } from '../core/api.js';
import { dispatchCall } from '../core/ui-server/dispatch.js';
import type { FromEngine, ToEngine } from './engine-protocol.js';

/**
 * The engine host's side of the main <-> utility-process protocol, without Electron:
 * contract calls validated and answered, every service event posted, shutdown = cancel, wait, stop.
 */
export function createEngineHostHandler(
  service: ServebenchService,
  post: (message: FromEngine) => void,
  exit: (code: number) => void,
): (message: ToEngine) => Promise<void> {
  const unsubscribe = service.subscribe((event) => post({ type: 'event', event }));
  let stopping = false;
  return async (message) => {
    if (message.type === 'call') {
      const outcome = await dispatchCall(service, message.method, message.args);
      post({ type: 'result', id: message.id, outcome });
      return;
    }
    if (message.type === 'shutdown') {
      if (stopping) return;
      stopping = true;
      // Cancel keeps what was measured; the run's own teardown stops its server (the whole process group).
      const active = await service.activeRun();
      if (active) await service.cancelRun(active.runId).catch(() => undefined);
      await service.idle();
      unsubscribe();
      post({ type: 'stopped' });
      exit(0);
    }
  };
}
