import type { LevelTelemetry } from '../../shared/run-record.js';
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
  /** Static facts of the GPUs (name, driver, memory, limits), once known. */
  gpuInfo?(): Array<{
    index: number;
    name: string | null;
    driver: string | null;
    cudaVersion: string | null;
    memoryMiB: number | null;
    powerLimitW: number | null;
    maxSmClockMhz: number | null;
    /** Values left out as no GPU has them (named in the run's warnings, not kept in run.json). */
    rejected?: string[];
  }>;
  /** Whether engine /metrics were scraped, and why not. */
  readonly engineStatus?: { available: boolean; reason?: string };
  /** Stretches where the GPU sampler was down (restarted). */
  gaps?(): TelemetryGap[];
  /** Warnings for the user before the run, e.g. other processes holding GPU memory. */
  warnings?(): string[];
  /** Other processes seen holding GPU memory, over time. */
  processSnapshots?(): GpuProcessSnapshot[];
  /** When a level's round CV exceeds 15 %: what coincided per round (null when within 15 %). */
  explainSpread?(
    rounds: ReadonlyArray<{ round: number; startMs: number; endMs: number; outputTokPerSec?: number }>,
    roundCv: number | null,
  ): string | null;
}

/** A stretch without GPU samples: the sampler died and was restarted (toMs null while still open). */
export interface TelemetryGap {
  fromMs: number;
  toMs: number | null;
  reason: string;
}

/** Processes seen holding GPU memory at one moment (the engine's own excluded). */
export interface GpuProcessSnapshot {
  tMs: number;
  processes: Array<{ pid: number; name: string; usedMemoryMiB: number | null }>;
}
