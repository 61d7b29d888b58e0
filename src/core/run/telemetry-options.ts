import type { ServerConfig } from '../../shared/config.js';
import type { TelemetryIssue } from '../../shared/run-record.js';
import type { ClientSample, EngineSample, GpuSample } from '../../shared/telemetry.js';
import type { Clock } from '../clock.js';

/** Options for creating the telemetry recorder of one server configuration. */
export interface TelemetryFactoryOptions {
  clock: Clock;
  metricsUrl?: string;
  engine: ServerConfig['engine'];
  nvidiaSmiPath?: string;
  dcgmUrl?: string;
  intervalMs: number;
  /** Fake GPU state written by the simulator (demo mode); the fake nvidia-smi reads it. */
  gpuStateFile?: string;
  /** The engine's own processes: not counted as "other processes on the GPU". */
  ownPids?: () => Iterable<number>;
  onGpuSample?: (sample: GpuSample) => void;
  onEngineSample?: (sample: EngineSample) => void;
  onClientSample?: (sample: ClientSample) => void;
  /** Ends telemetry's queries and children at once (the run's cancel). */
  signal?: AbortSignal;
  /** A source was dropped or sent an impossible value: said once, as a run message. */
  onIssue?: (issue: TelemetryIssue) => void;
}
