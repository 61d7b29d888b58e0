import type { Check, LevelTelemetry } from '../../shared/run-record.js';
import type { ClientSample, EngineSample, GpuSample, ThrottleEpisode } from '../../shared/telemetry.js';

/** Samples GPU, engine and client during a run on the run's clock. */
export interface TelemetryRecorder {
  start(): Promise<void>;
  stop(): Promise<void>;
  /** 'unavailable' with a reason when no GPU source works; the run goes on. */
  readonly gpuStatus: { available: boolean; source: LevelTelemetry['source']; reason?: string };
  gpuSamples(fromMs?: number, toMs?: number): GpuSample[];
  engineSamples(fromMs?: number, toMs?: number): EngineSample[];
  clientSamples(fromMs?: number, toMs?: number): ClientSample[];
  episodes(): ThrottleEpisode[];
  /** Summary of the measured window of one level (warm-up excluded). */
  summarizeWindow(fromMs: number, toMs: number, outputTokens: number): LevelTelemetry;
  /** Resolves once the GPU is idle and at or below tempC (optional pre-level gate). */
  waitCool?(tempC: number, signal?: AbortSignal): Promise<void>;
}

/** Checks derived from a level's telemetry: throttling and preemptions. */
export type TelemetryChecks = (telemetry: LevelTelemetry | undefined) => Check[];
