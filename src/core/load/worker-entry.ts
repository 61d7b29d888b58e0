import { parentPort } from 'node:worker_threads';
import { createMonoClock } from '../clock.js';
import { createInThreadExecutor } from './executor.js';
import type { RequestExecutor } from './executor.js';
import type { RequestSpec } from './stream-client.js';
import type { FromWorker, ToWorker } from './worker-protocol.js';

// A load worker: its own event loop and HTTP client, timestamps on the shared monotonic clock origin.
const port = parentPort;
if (!port) throw new Error('load worker must run in a worker thread');
let executor: RequestExecutor | null = null;

/** Runs a request: tells the scheduler's thread when it ended on the wire (its lane refills), then what came back. */
const exec = (spec: RequestSpec): void => {
  void executor
    ?.execute(spec, () => port.postMessage({ type: 'ended', id: spec.id } satisfies FromWorker))
    .then((outcome) => port.postMessage({ type: 'done', outcome } satisfies FromWorker));
};

port.on('message', (message: ToWorker) => {
  switch (message.type) {
    case 'init':
      executor = createInThreadExecutor({
        baseUrl: message.baseUrl,
        apiKey: message.apiKey,
        clock: createMonoClock(BigInt(message.originMonoNs)),
      });
      break;
    case 'exec':
      exec(message.spec);
      break;
    case 'abort':
      executor?.abortAll(message.reason);
      break;
    case 'lag-start':
      executor?.startLagWindow();
      break;
    case 'lag-end':
      void (executor?.endLagWindow() ?? Promise.resolve(null)).then((p99Ms) =>
        port.postMessage({ type: 'lag', p99Ms } satisfies FromWorker),
      );
      break;
    case 'close':
      void (executor?.close() ?? Promise.resolve()).then(() => {
        port.postMessage({ type: 'closed' } satisfies FromWorker);
        port.close();
      });
      break;
  }
});
