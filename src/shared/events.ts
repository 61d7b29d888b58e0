import type { EndpointKind } from './endpoint-kinds.js';
import type { LevelResult, RunRecord, RunStatus } from './run-record.js';
import type { EngineSample, GpuSample } from './telemetry.js';
import type { PlannedLevel } from './run-estimate.js';

/** Server lifecycle states as seen by the user. */
export type ServerState = 'checking' | 'launching' | 'loading' | 'ready' | 'stopping' | 'stopped' | 'failed';

/** Progress pushed by the engine; the CLI and the UI only render these. */
export type RunEvent =
  | {
      type: 'run-started';
      runId: string;
      dir: string;
      simulated: boolean;
      totalLevels: number;
      /** When the run started (ISO wall time): the elapsed time a view shows, even one opened mid-run. */
      startedAt?: string;
      /** The wall instant of the run clock's 0 (ISO): events' ms are on that clock. */
      clockOriginWall?: string;
      /** Every level the run plans, in order (absent for a capacity search, whose levels are chosen as it goes). */
      plan?: PlannedLevel[];
    }
  /** A sweep of server configurations (--vary) moves on to this one: its server is (re)started next. */
  | { type: 'server-config'; index: number; total: number }
  | { type: 'server-state'; state: ServerState; detail?: string }
  | { type: 'server-log'; line: string; stream: 'stdout' | 'stderr' }
  | { type: 'server-progress'; key: string; message: string; value?: number }
  | {
      type: 'level-started';
      levelIndex: number;
      concurrency: number;
      rate?: number;
      /** A trace whose arrivals span 0 ms: requests sent at once (no rate). */
      burst?: number;
      inputLen: number;
      outputLen: number;
      /** A prompt file read with its own lengths: inputLen/outputLen are the flags', which these requests do not use. */
      inputFromFile?: boolean;
      outputFromFile?: boolean;
      /** Pooling levels (embeddings, rerank): the kind and inputs per request; they have no output length. */
      endpoint?: EndpointKind;
      batchSize?: number;
      warmupRequests: number;
      measuredRequests: number;
      serverConfigIndex: number;
    }
  | {
      type: 'phase';
      levelIndex: number;
      phase: 'prompts' | 'cooldown' | 'warmup' | 'measure';
      round?: number;
      /** When the phase began, ms on the run clock (stamped by the run session). */
      atMs?: number;
      /** Prompt building: prompts built so far of `total` (0 while the length is being calibrated). */
      done?: number;
      total?: number;
    }
  | {
      type: 'request-done';
      levelIndex: number;
      round: number;
      ok: boolean;
      ttftMs: number | null;
      e2eMs: number | null;
      /** When the request ended, ms after the run's clock origin (same axis as GPU samples). */
      endMs: number;
      /** Open loop: when its schedule wanted it sent (the live view's offered rate). */
      scheduledMs?: number;
      /** Multi-turn: its conversation (the live view's conversations in flight). */
      conversation?: number;
      done: number;
      total: number;
      /** Requests of the level that failed so far (warm-up included): exact even where a viewer gets only some of these events. */
      failed?: number;
    }
  | { type: 'level-finished'; levelIndex: number; level: LevelResult }
  | { type: 'gpu-sample'; sample: GpuSample }
  | { type: 'engine-sample'; sample: EngineSample }
  | { type: 'message'; severity: 'info' | 'warn' | 'error'; text: string }
  | { type: 'run-finished'; runId: string; dir: string; status: RunStatus; record: RunRecord };
