import type { ServerConfig } from '../../shared/config.js';
import type { RunEvent } from '../../shared/events.js';

/** What a started (or attached) server tells the benchmark. */
export interface ServerInfo {
  engine: ServerConfig['engine'];
  /** Base URL, without /v1. */
  baseUrl: string;
  /** Model name to put in requests. */
  model: string;
  engineVersion?: string;
  simulated: boolean;
  /**
   * From the engine's log, when it says so: vLLM "Maximum concurrency for N tokens per request: X" (X, valid for
   * requests of N tokens: see maxConcurrencyTokens), else SGLang max_running_requests.
   */
  maxConcurrency?: number;
  /** N of vLLM's "Maximum concurrency for N tokens per request" (its max model length): what maxConcurrency is for. */
  maxConcurrencyTokens?: number;
  /** SGLang's max_running_requests from its log: at most this many requests run at once, whatever their size. */
  maxRunningRequests?: number;
  /** Tokens the KV cache holds (vLLM "GPU KV cache size", SGLang max_total_num_tokens). */
  kvCacheTokens?: number;
  /** Several --url replicas: each one's base URL (the first is baseUrl), in --url order. */
  replicaUrls?: string[];
  /** Prometheus endpoint, when the engine has one. */
  metricsUrl?: string;
  /** Fake GPU state file written by the simulator (demo mode telemetry). */
  gpuStateFile?: string;
  /** The launch command line, secrets redacted (for the run record; never executed). */
  command?: string;
  /** Leader pid of the server's process group (launched engines only). */
  pid?: number;
  /** The whole server log (launched engines only). */
  logFile?: string;
  /** Things servebench decided for the user at launch (also sent as 'message' events). */
  notes?: string[];
}

/** Why a server ended or failed to start; `fix` is the one line that tells the user what to do. */
export interface ServerFailure {
  kind:
    | 'oom'
    | 'kv-cache-too-small'
    | 'model-not-found'
    | 'port-in-use'
    | 'engine-missing'
    | 'cuda-mismatch'
    | 'timeout'
    | 'crashed'
    | 'unreachable'
    | 'not-openai'
    | 'unknown';
  message: string;
  fix: string;
  logTail: string[];
}

/** What a server that can go away without an exit servebench sees (an attached one) is told around levels. */
export interface LevelWatch {
  /** A request of a level found nothing listening (connection refused): the server is gone, `died` resolves now. */
  requestRefused(): void;
  /** Before a level: a line to say when the server went away and came back since the last one; check hasDied() after. */
  levelStarting(signal?: AbortSignal): Promise<string | null>;
  /** After a level: watch the server until the next one starts. */
  levelEnded(): void;
}

/** A server the benchmark can use; owns the child process (if any) and stops it. */
export interface RunningServer {
  readonly info: ServerInfo;
  /**
   * Attach only: a server servebench did not start dies without an exit to see; a refused request or a probe
   * between levels tells, and then `died` resolves as for a launched engine's exit.
   */
  readonly watch?: LevelWatch;
  /**
   * Resolves as soon as the server process exits unexpectedly (never after stop(); for attach, see `watch`); used to fail
   * a run. The failure is built from what is known at the exit; the same object is completed (log lines still in
   * the pipes, their classification) once the process group is reaped: read it after `await stop()` for the full one.
   */
  readonly died: Promise<ServerFailure>;
  /** True from the moment the process exited unexpectedly (synchronously, with `died`); false after stop() and for attach. */
  readonly exited: boolean;
  /** The failure `died` resolves with once the process exited unexpectedly, else null (synchronous). */
  hasDied(): ServerFailure | null;
  /** Stop: SIGINT, SIGTERM, SIGKILL to the whole process group, with grace periods. Idempotent. */
  stop(): Promise<void>;
  logTail(lines?: number): string[];
}

export interface StartServerOptions {
  /** Run folder: server.log and generated config files go here. */
  runDir: string;
  onEvent?: (event: RunEvent) => void;
  signal?: AbortSignal;
  /** Largest concurrency of the sweep (SGLang diffusion needs max-running-requests). */
  maxConcurrency?: number;
  /** attach: bearer key for the readiness and model probes. */
  apiKey?: string;
  /** The sweep's largest request: engines with a per-request limit (llama.cpp's per-slot context) warn before the run. */
  largestRequest?: { inputTokens: number; outputTokens: number };
}

/** Launches or attaches to a server from a ServerConfig. */
export type StartServer = (config: ServerConfig, options: StartServerOptions) => Promise<RunningServer>;
