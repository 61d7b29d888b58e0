import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SimEngine, type SimEngineCounts } from './engine.js';
import { foldFaults, type FaultSet, type SimFault } from './faults.js';
import { Router } from './http.js';
import { registerMimicRoutes } from './mimic-routes.js';
import { DEFAULT_PROFILE_NAME, loadProfile, type SimProfile } from './profile.js';
import { realSimClock, type SimClock } from './sim-clock.js';
import { loadLines, oomLines, readyLines, simBanner, type Mimic, type StartupContext } from './startup-log.js';
import { wireFormat } from './wire-format.js';

export type { SimEngineCounts } from './engine.js';

/** How to start a simulated engine (all optional; defaults: vllm mimic, default profile, free port). */
export interface SimOptions {
  host?: string;
  /** 0 = a free port. */
  port?: number;
  /** Served model name. */
  model?: string;
  /** LoRA adapter names served beside the model (a request's model may name one). */
  adapters?: readonly string[];
  mimic?: Mimic;
  /** Report cached prompt tokens in usage, as vLLM's --enable-prompt-tokens-details and SGLang's --enable-cache-report. */
  cacheReport?: boolean;
  profile?: SimProfile;
  seed?: number;
  /** Truth log: one JSON line per request with server-side timestamps. */
  truthFile?: string;
  /** Fake GPU state file for the fake nvidia-smi. */
  gpuStateFile?: string;
  faults?: SimFault[];
  /** Receives the engine's log lines (start-up, ready line, crash). */
  log?: (line: string) => void;
  /** crash-after fault: called once the server has crashed (the CLI exits the process here). */
  onCrash?: () => void;
  /** How often the fake GPU advances and its state file is rewritten (ms); default 200. */
  gpuTickMs?: number;
  /** Time and timers of the engine (steps, stalls, GPU ticks, slow-start, truth log); default the real clock. */
  clock?: SimClock;
}

/** A running simulated engine. */
export interface SimServer {
  /** http://HOST:PORT, without /v1. */
  url: string;
  port: number;
  /** The engine's queues now: lets a test step a virtual clock once every expected request has arrived. */
  engineCounts(): SimEngineCounts;
  /** Stops the engine: open streams are cut, the truth log is flushed. Idempotent. */
  close(): Promise<void>;
}

/** Thrown by startSimServer for the oom-on-start fault; the engine's OOM line was logged. */
export class SimOomError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SimOomError';
  }
}

/** Default served model name. */
export const DEFAULT_SIM_MODEL = 'servebench/sim-llama-8b';

/**
 * Starts the simulated engine and resolves once it answers requests (after its ready line): the engine
 * (engine.ts), the endpoints of its mimic (mimic-routes.ts) and the mimic's wire format (wire-format.ts).
 */
export async function startSimServer(options: SimOptions = {}): Promise<SimServer> {
  const profile = options.profile ?? loadProfile(DEFAULT_PROFILE_NAME);
  const mimic: Mimic = options.mimic ?? 'vllm';
  const model = options.model ?? DEFAULT_SIM_MODEL;
  const host = options.host ?? '127.0.0.1';
  const faults: FaultSet = foldFaults(options.faults);
  const log = options.log ?? (() => undefined);
  const ctx: StartupContext = { mimic, model, host, port: options.port ?? 0, profile, pid: process.pid };

  log(simBanner(ctx));
  const load = loadLines(ctx);
  // A real OOM happens while the KV cache is sized, so its lines stop before the cache size line.
  const kvLine = load.findIndex((l) => /KV cache size|KV Cache is allocated/.test(l));
  for (const line of faults.oomOnStart && kvLine >= 0 ? load.slice(0, kvLine) : load) log(line);
  if (faults.oomOnStart) {
    const lines = oomLines(ctx);
    for (const line of lines) log(line);
    throw new SimOomError(lines[lines.length - 1] ?? 'out of memory');
  }

  const server: Server = createServer({ keepAliveTimeout: 60_000, noDelay: true, requestTimeout: 0 });
  const engine = new SimEngine({
    model,
    profile,
    seed: options.seed ?? 0,
    faults,
    clock: options.clock ?? realSimClock,
    wire: wireFormat(mimic, options.cacheReport ?? false),
    truthFile: options.truthFile,
    gpuStateFile: options.gpuStateFile,
    gpuTickMs: options.gpuTickMs ?? 200,
    log,
    stopServer: () => {
      server.close();
      server.closeAllConnections();
    },
    onCrash: options.onCrash,
  });
  const router = new Router();
  registerMimicRoutes(router, {
    engine,
    parse: {
      mimic,
      model,
      maxModelLen: profile.maxModelLen,
      keepIds: engine.prefixCache !== null,
      ...(options.adapters && options.adapters.length > 0 ? { adapters: options.adapters } : {}),
    },
    startup: ctx,
  });
  server.on('request', (req: IncomingMessage, res: ServerResponse) =>
    router.handle(req, res, engine.clock.nowNs(), engine.clock.nowMs()),
  );

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  ctx.port = port;
  engine.startTicking();

  for (const line of readyLines(ctx)) log(line);
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  let closed = false;

  return {
    url,
    port,
    engineCounts: () => engine.counts(),
    close: async () => {
      if (closed) return;
      closed = true;
      engine.stop();
      const done = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      if (!engine.hasCrashed) await done;
      engine.flushTruth();
    },
  };
}
