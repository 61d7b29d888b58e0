import type { ServebenchService } from '../../src/core/api.js';
import type { ContractEvent } from '../../src/shared/contract.js';

/**
 * Wraps a service so that its events stop reaching the UI at a chosen point until `release()`.
 * The run itself goes on; only what the page sees is held, so a mid-run view stays on screen for as long
 * as the test needs, however fast or slow the machine is.
 */
export function holdEvents(
  service: ServebenchService,
  holdAfter: (event: ContractEvent, seen: readonly ContractEvent[]) => boolean,
): { service: ServebenchService; held: Promise<void>; release: () => void } {
  const seen: ContractEvent[] = [];
  const buffer: ContractEvent[] = [];
  const listeners = new Set<(event: ContractEvent) => void>();
  let state: 'passing' | 'holding' | 'released' = 'passing';
  let onHeld: () => void = () => undefined;
  const held = new Promise<void>((resolve) => {
    onHeld = resolve;
  });
  const deliver = (event: ContractEvent): void => {
    for (const l of listeners) l(event);
  };
  service.subscribe((event) => {
    if (state === 'holding') {
      buffer.push(event);
      return;
    }
    seen.push(event);
    deliver(event);
    if (state === 'passing' && holdAfter(event, seen)) {
      state = 'holding';
      onHeld();
    }
  });
  return {
    service: {
      ...service,
      subscribe(listener, options) {
        // A page that (re)opens mid-run first gets what the page was shown of the run so far.
        if (options?.replay) {
          const from = seen.findLastIndex((e) => e.type === 'run-started');
          const finished = seen.findLastIndex((e) => e.type === 'run-finished');
          if (from >= 0 && finished < from) for (const event of seen.slice(from)) listener(event);
        }
        listeners.add(listener);
        return () => listeners.delete(listener);
      },
    },
    held,
    release() {
      if (state !== 'holding') return;
      state = 'released';
      for (const event of buffer.splice(0)) deliver(event);
    },
  };
}
