// A load worker that dies on its first request: the executor must not hang.
import { parentPort } from 'node:worker_threads';

parentPort.on('message', (message) => {
  if (message.type === 'exec') process.exit(3);
});
