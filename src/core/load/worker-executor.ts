import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { findDistFile } from '../package-root.js';
import type { ExecutorOptions, RequestExecutor } from './executor.js';
import type { RequestOutcome, RequestSpec } from './stream-client.js';
import type { FromWorker, ToWorker } from './worker-protocol.js';

/** Finds the bundled worker script: beside the bundle (dist/), else dist/ under the package root. */
export function resolveWorkerScript(): string | null {
  const sibling = join(dirname(fileURLToPath(import.meta.url)), 'load-worker.js');
  return existsSync(sibling) ? sibling : (findDistFile('load-worker.js') ?? null);
}

interface Slot {
  worker: Worker;
  inFlight: number;
  pending: Map<number, (outcome: RequestOutcome) => void>;
}

/**
 * Spreads streams over worker threads, each with its own event loop, so that parsing one stream's chunks
 * never delays the timestamp of another's first token; the scheduler stays in the calling thread.
 */
export function createWorkerExecutor(options: ExecutorOptions & { workers: number; script?: string }): RequestExecutor {
  const script = options.script ?? resolveWorkerScript();
  if (!script) throw new Error('load worker script not found: run `npm run build:cli`');
  const slots: Slot[] = [];
  for (let i = 0; i < options.workers; i++) {
    const worker = new Worker(script);
    const slot: Slot = { worker, inFlight: 0, pending: new Map() };
    worker.on('message', (message: FromWorker) => {
      if (message.type !== 'done') return;
      const resolve = slot.pending.get(message.outcome.id);
      slot.pending.delete(message.outcome.id);
      slot.inFlight--;
      resolve?.(message.outcome);
    });
    worker.postMessage({
      type: 'init',
      baseUrl: options.baseUrl,
      apiKey: options.apiKey,
      originMonoNs: options.clock.originMonoNs.toString(),
    } satisfies ToWorker);
    slots.push(slot);
  }

  return {
    threads: slots.length,
    execute(spec: RequestSpec): Promise<RequestOutcome> {
      let best = slots[0] as Slot;
      for (const slot of slots) if (slot.inFlight < best.inFlight) best = slot;
      best.inFlight++;
      return new Promise((resolve) => {
        best.pending.set(spec.id, resolve);
        best.worker.postMessage({ type: 'exec', spec } satisfies ToWorker);
      });
    },
    abortAll() {
      for (const slot of slots) slot.worker.postMessage({ type: 'abort' } satisfies ToWorker);
    },
    async close() {
      await Promise.all(
        slots.map(
          (slot) =>
            new Promise<void>((resolve) => {
              slot.worker.once('exit', () => resolve());
              slot.worker.postMessage({ type: 'close' } satisfies ToWorker);
            }),
        ),
      );
    },
  };
}
