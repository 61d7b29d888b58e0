import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { findDistFile } from '../package-root.js';
import { createLagWindow } from './executor.js';
import type { ExecutorOptions, RequestExecutor } from './executor.js';
import { StreamAccumulator } from './stream-accumulator.js';
import type { AbortReason, RequestOutcome, RequestSpec } from './stream-client.js';
import type { FromWorker, ToWorker } from './worker-protocol.js';

/** Finds the bundled worker script: beside the bundle (dist/), else dist/ under the package root. */
export function resolveWorkerScript(): string | null {
  const sibling = join(dirname(fileURLToPath(import.meta.url)), 'load-worker.js');
  return existsSync(sibling) ? sibling : (findDistFile('load-worker.js') ?? null);
}

interface Slot {
  worker: Worker;
  alive: boolean;
  inFlight: number;
  pending: Map<number, { spec: RequestSpec; resolve: (outcome: RequestOutcome) => void; onEnded?: () => void }>;
  lag: Array<(p99Ms: number | null) => void>;
  exited: Promise<void>;
}

function failedOutcome(spec: RequestSpec, tMs: number, message: string): RequestOutcome {
  const acc = new StreamAccumulator();
  acc.fail(message, 'client-error');
  return { id: spec.id, requestTag: spec.requestTag, sendMs: tMs, endMs: tMs, httpStatus: null, result: acc.result() };
}

/**
 * Spreads streams over worker threads, each with its own event loop, so that parsing one stream's chunks
 * never delays the timestamp of another's first token; the scheduler stays in the calling thread.
 */
export function createWorkerExecutor(options: ExecutorOptions & { workers: number; script?: string }): RequestExecutor {
  const script = options.script ?? resolveWorkerScript();
  if (!script) throw new Error('load worker script not found: run `npm run build:cli`');
  const clock = options.clock;
  const mainLag = createLagWindow();
  const slots: Slot[] = [];
  for (let i = 0; i < options.workers; i++) {
    const worker = new Worker(script);
    let markExited: () => void = () => undefined;
    const slot: Slot = {
      worker,
      alive: true,
      inFlight: 0,
      pending: new Map(),
      lag: [],
      exited: new Promise<void>((resolve) => {
        markExited = resolve;
      }),
    };
    worker.on('message', (message: FromWorker) => {
      if (message.type === 'lag') {
        slot.lag.shift()?.(message.p99Ms);
        return;
      }
      if (message.type === 'ended') {
        slot.pending.get(message.id)?.onEnded?.();
        return;
      }
      if (message.type !== 'done') return;
      const entry = slot.pending.get(message.outcome.id);
      slot.pending.delete(message.outcome.id);
      slot.inFlight--;
      entry?.resolve(message.outcome);
    });
    // A worker that dies must not hang the run: its requests end as client errors.
    const onDeath = (why: string): void => {
      if (!slot.alive) return;
      slot.alive = false;
      const tMs = clock.nowMs();
      for (const { spec, resolve } of slot.pending.values()) resolve(failedOutcome(spec, tMs, why));
      slot.pending.clear();
      slot.inFlight = 0;
      for (const waiter of slot.lag.splice(0)) waiter(null);
    };
    worker.on('error', (error) => onDeath(`load worker crashed: ${error.message}`));
    worker.on('exit', (code) => {
      onDeath(`load worker exited (code ${code})`);
      markExited();
    });
    worker.postMessage({
      type: 'init',
      baseUrl: options.baseUrl,
      apiKey: options.apiKey,
      originMonoNs: clock.originMonoNs.toString(),
    } satisfies ToWorker);
    slots.push(slot);
  }
  const post = (message: ToWorker): void => {
    for (const slot of slots) if (slot.alive) slot.worker.postMessage(message);
  };

  return {
    threads: slots.length,
    execute(spec: RequestSpec, onEnded?: () => void): Promise<RequestOutcome> {
      let best: Slot | null = null;
      for (const slot of slots) if (slot.alive && (!best || slot.inFlight < best.inFlight)) best = slot;
      if (!best) return Promise.resolve(failedOutcome(spec, clock.nowMs(), 'no load worker is alive'));
      const target = best;
      target.inFlight++;
      return new Promise((resolve) => {
        target.pending.set(spec.id, { spec, resolve, onEnded });
        target.worker.postMessage({ type: 'exec', spec } satisfies ToWorker);
      });
    },
    abortAll(reason?: AbortReason) {
      post({ type: 'abort', reason });
    },
    startLagWindow() {
      mainLag.start();
      post({ type: 'lag-start' });
    },
    async endLagWindow() {
      const workerLags = slots
        .filter((slot) => slot.alive)
        .map((slot) => new Promise<number | null>((resolve) => slot.lag.push(resolve)));
      post({ type: 'lag-end' });
      const all = [mainLag.end(), ...(await Promise.all(workerLags))].filter((v): v is number => v !== null);
      return all.length > 0 ? Math.max(...all) : null;
    },
    async close() {
      post({ type: 'close' });
      await Promise.all(slots.map((slot) => slot.exited));
    },
  };
}
