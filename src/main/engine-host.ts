// Entry of the engine's utility process: the benchmark engine runs here, off Electron's main thread,
// so a busy load generator neither freezes the windows nor skews its own timings.
/// <reference types="electron" />
import { resolve } from 'node:path';
import { createServebenchService } from '../core/api.js';
import { defaultBenchmarkDeps } from '../core/default-deps.js';
import { listPresets } from '../core/servers/presets.js';
import { createEngineHostHandler } from './engine-host-handler.js';
import type { FromEngine, ToEngine } from './engine-protocol.js';
import { RUNS_DIR_ENV } from './engine-protocol.js';

// Children the engine spawns with process.execPath (the simulator) must run it as Node, not as Electron.
process.env.ELECTRON_RUN_AS_NODE = '1';

const port = process.parentPort;
const service = createServebenchService({
  outDir: resolve(process.env[RUNS_DIR_ENV] ?? 'runs'),
  deps: defaultBenchmarkDeps(),
  listPresets: () => listPresets(),
});
const handle = createEngineHostHandler(
  service,
  (message: FromEngine) => port.postMessage(message),
  (code) => process.exit(code),
);
port.on('message', (e: { data: ToEngine }) => {
  void handle(e.data);
});
